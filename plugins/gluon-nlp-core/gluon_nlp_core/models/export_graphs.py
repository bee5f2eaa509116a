"""The graphs decoding needs, for export to ONNX (``ModelSpec.export_graphs`` names these).

A text model's own forward is often no single graph another runtime can drive: the LSTM
language models and ELMo make zero states when none are given, GPT-2 takes its key/value
cache as an optional list, the Transformer is a plain ``Block`` with an encoder and a
decoder. Each function here takes the built model and returns
:class:`gluon_hub.specs.ExportGraph` objects: ``HybridBlock`` wrappers that share the
model's parameters, take every state as an explicit input and return it as an output,
with outputs equal to the model's own. ``gluon_hub.export(name, path, format="onnx")``
writes one file per graph.

=====================  ===================================================================
model                  graphs (inputs -> outputs)
=====================  ===================================================================
LSTM LMs, big RNN      ``step``: tokens ``(T, B)``, states -> scores ``(T, B, V)``, states
                       (the big RNN's length is fixed at export, as ELMo's)
GPT-2                  ``prompt``: tokens -> scores, every layer's key and value;
                       ``step``: tokens, keys and values so far -> scores, keys, values
Transformer            ``encoder``: source, source lengths -> memory;
                       ``decoder_step``: target prefix, memory, source lengths -> the
                       next-token scores ``(B, V)`` after the prefix
BERT, RoBERTa,         ``full`` (no ``valid_length``) and ``valid_length`` (padded rows)
DistilBERT
ELMo                   ``step``: characters, states -> every layer's output, states; the
                       sequence length is fixed at export (the LSTM loop is unrolled)
=====================  ===================================================================
"""

from __future__ import annotations

from typing import Any, Sequence

from gluon_hub.compat import mx
from gluon_hub.specs import ExportGraph

from .bert import BERTModel
from .distilbert import DistilBERTModel
from .elmo import LSTMPLayer
from .roberta import RoBERTaModel

HybridBlock = mx.gluon.HybridBlock

__all__ = [
    "language_model_graphs",
    "gpt2_graphs",
    "transformer_graphs",
    "bert_graphs",
    "elmo_graphs",
]


def _flatten(nested: Any) -> list:
    if isinstance(nested, (list, tuple)):
        return [leaf for item in nested for leaf in _flatten(item)]
    return [nested]


def _nest(flat: Sequence, template: Any) -> Any:
    """``flat`` in the list structure of ``template`` (whose leaves are consumed in order)."""
    leaves = iter(flat)

    def build(node: Any) -> Any:
        if isinstance(node, (list, tuple)):
            return [build(child) for child in node]
        return next(leaves)

    return build(template)


def _batch_free(one: Sequence, two: Sequence) -> tuple[tuple[int | None, ...], ...]:
    """Shapes of arrays made for batch 1, with ``None`` where batch 2 changes the size."""
    return tuple(tuple(None if a != b else a for a, b in zip(x.shape, y.shape))
                 for x, y in zip(one, two))


def _blocks(block: mx.gluon.Block) -> list[mx.gluon.Block]:
    found = [block]
    for child in block._children.values():
        found.extend(_blocks(child))
    return found


class _Unrolled:
    """While tracing, the model's LSTMP layers unroll their loop over ``length`` steps.

    MXNet's ``foreach`` has no ONNX converter; unrolled, the graph is plain operators
    with a fixed sequence length. Outside the trace (NDArrays) nothing changes.
    """

    def __init__(self, model: mx.gluon.Block, length: int | None, F: Any) -> None:
        self._layers = [b for b in _blocks(model) if isinstance(b, LSTMPLayer)]
        self._length = None if F is mx.nd else length

    def __enter__(self) -> None:
        for layer in self._layers:
            layer.unroll_length = self._length

    def __exit__(self, *exc: Any) -> None:
        for layer in self._layers:
            layer.unroll_length = None


def _has_lstmp(model: mx.gluon.Block) -> bool:
    return any(isinstance(b, LSTMPLayer) for b in _blocks(model))


class StatefulLanguageModel(HybridBlock):
    """An LSTM language model with its states as inputs and outputs:
    ``(tokens, *states) -> (scores, *new_states)``, states flat in ``begin_state`` order.
    ``length`` unrolls LSTMP layers (the big RNN) over that many steps."""

    def __init__(self, model: HybridBlock, length: int | None = None) -> None:
        super().__init__(prefix="")
        self.model = model
        self._length = length
        self._template = model.begin_state(batch_size=1)

    def hybrid_forward(self, F, tokens, *states):
        with _Unrolled(self.model, self._length, F):
            scores, new_states = self.model(tokens, _nest(states, self._template))
        return (scores, *_flatten(new_states))


def language_model_graphs(model: HybridBlock,
                          input_shape: Sequence[int] | None = None) -> list[ExportGraph]:
    """The ``step`` graph of a (standard, AWD or big) LSTM language model; ``input_shape``
    is the tokens' ``(length, batch)``. Batch stays free, and the length too except for
    the big RNN, whose LSTMP loop is unrolled: export it once per length served."""
    length, batch = tuple(input_shape or (4, 1))
    one = _flatten(model.begin_state(batch_size=1))
    states = _batch_free(one, _flatten(model.begin_state(batch_size=2)))
    trace = [tuple(batch if d is None else d for d in shape) for shape in states]
    unroll = length if _has_lstmp(model) else None
    return [ExportGraph("step", StatefulLanguageModel(model, unroll),
                        ((length, batch), *trace), ("int32",) + ("float32",) * len(trace),
                        ((unroll, None), *states))]


class GPT2Prompt(HybridBlock):
    """GPT-2 over a prompt with no cache: ``tokens -> (scores, key_0, value_0, ...)``.

    Token ids come in as integers and are cast to the float32 the model computes positions
    in (an int32 position would not add to the cache's float32 length)."""

    def __init__(self, model: HybridBlock) -> None:
        super().__init__(prefix="")
        self.model = model

    def hybrid_forward(self, F, tokens):
        scores, states = self.model(F.cast(tokens, "float32"))
        return (scores, *states)


class GPT2Step(GPT2Prompt):
    """GPT-2 after a cache: ``(tokens, key_0, value_0, ...) -> (scores, key_0, ...)``, the
    keys and values over past and present."""

    def hybrid_forward(self, F, tokens, *cache):
        scores, states = self.model(F.cast(tokens, "float32"), list(cache))
        return (scores, *states)


def gpt2_graphs(model: HybridBlock, input_shape: Sequence[int] | None = None) -> list[ExportGraph]:
    """GPT-2's ``prompt`` and ``step`` graphs; ``input_shape`` is the prompt's
    ``(batch, length)``. Batch, length and the cache's length stay free."""
    batch, length = tuple(input_shape or (1, 4))
    _, states = model(mx.nd.zeros((1, 1)))
    cache = tuple((batch, s.shape[1], length, s.shape[3]) for s in states)
    free = tuple((None, s.shape[1], None, s.shape[3]) for s in states)
    return [
        ExportGraph("prompt", GPT2Prompt(model), ((batch, length),), ("int32",),
                    ((None, None),)),
        ExportGraph("step", GPT2Step(model), ((batch, 1), *cache),
                    ("int32",) + ("float32",) * len(cache), ((None, None), *free)),
    ]


class TransformerEncoderGraph(HybridBlock):
    """The Transformer's encoder: ``(source, source_valid_length) -> memory``."""

    def __init__(self, model: mx.gluon.Block) -> None:
        super().__init__(prefix="")
        self.src_embed = model.src_embed
        self.encoder = model.encoder

    def hybrid_forward(self, F, src, valid_length):
        return self.encoder(self.src_embed(src), valid_length)


class TransformerDecoderStep(HybridBlock):
    """One greedy or beam step of the Transformer's decoder: ``(target prefix, memory,
    source_valid_length) -> scores (batch, vocab_size)`` of the token after the prefix, as
    ``TransformerNMT.decode(...)[:, -1]``."""

    def __init__(self, model: mx.gluon.Block) -> None:
        super().__init__(prefix="")
        self.tgt_embed = model.tgt_embed
        self.decoder = model.decoder
        self.tgt_proj = model.tgt_proj

    def hybrid_forward(self, F, tgt, memory, mem_valid_length):
        hidden = self.decoder(self.tgt_embed(tgt), memory, mem_valid_length)
        last = F.slice_axis(hidden, axis=1, begin=-1, end=None)
        return F.reshape(self.tgt_proj(last), shape=(0, -1))


def transformer_graphs(model: mx.gluon.Block,
                       input_shape: Sequence[int] | None = None) -> list[ExportGraph]:
    """The Transformer's ``encoder`` and ``decoder_step`` graphs; ``input_shape`` is the
    source's ``(batch, length)``. Batch and both lengths stay free; lengths are float32."""
    batch, length = tuple(input_shape or (1, 4))
    units = model.encoder._units
    return [
        ExportGraph("encoder", TransformerEncoderGraph(model), ((batch, length), (batch,)),
                    ("int32", "float32"), ((None, None), (None,))),
        ExportGraph("decoder_step", TransformerDecoderStep(model),
                    ((batch, 2), (batch, length, units), (batch,)),
                    ("int32", "float32", "float32"),
                    ((None, None), (None, None, units), (None,))),
    ]


class BERTGraph(HybridBlock):
    """A BERT-style encoder with a fixed set of inputs: token types only where the model
    embeds them, ``valid_length`` or not, masked positions only with the masked-LM head."""

    def __init__(self, model: BERTModel, valid_length: bool) -> None:
        super().__init__(prefix="")
        self.model = model
        self._valid_length = valid_length

    def hybrid_forward(self, F, inputs, *rest):
        rest = list(rest)
        token_types = rest.pop(0) if self.model._use_token_type_embed else None
        valid_length = rest.pop(0) if self._valid_length else None
        masked = rest.pop(0) if self.model._use_decoder else None
        if isinstance(self.model, DistilBERTModel):
            return self.model(inputs, valid_length)
        if isinstance(self.model, RoBERTaModel):
            return self.model(inputs, valid_length, masked)
        return self.model(inputs, token_types, valid_length, masked)


def bert_graphs(model: BERTModel, input_shape: Sequence[int] | None = None) -> list[ExportGraph]:
    """The ``full`` and ``valid_length`` graphs of BERT, ERNIE, RoBERTa or DistilBERT;
    ``input_shape`` is the tokens' ``(batch, length)``. Batch and length stay free (and
    the number of masked positions, with the masked-LM head)."""
    batch, length = tuple(input_shape or (1, 8))
    graphs = []
    for name, with_length in (("full", False), ("valid_length", True)):
        shapes = [(batch, length)]
        free: list[tuple[int | None, ...]] = [(None, None)]
        if model._use_token_type_embed:
            shapes.append((batch, length))
            free.append((None, None))
        if with_length:
            shapes.append((batch,))
            free.append((None,))
        if model._use_decoder:
            shapes.append((batch, 2))
            free.append((None, None))
        graphs.append(ExportGraph(name, BERTGraph(model, with_length), tuple(shapes),
                                  ("int32",) * len(shapes), tuple(free)))
    return graphs


class ELMoStep(HybridBlock):
    """ELMo with its states: ``(chars, *states) -> (*layer_outputs, *new_states)``, the
    states flat in ``begin_state`` order, the LSTM loop unrolled over ``length`` steps."""

    def __init__(self, model: HybridBlock, length: int) -> None:
        super().__init__(prefix="")
        self.model = model
        self._length = length
        self._template = model.begin_state(batch_size=1)

    def hybrid_forward(self, F, chars, *states):
        with _Unrolled(self.model, self._length, F):
            outputs, new_states = self.model(chars, _nest(states, self._template))
        return (*outputs, *_flatten(new_states))


def elmo_graphs(model: HybridBlock, input_shape: Sequence[int] | None = None) -> list[ExportGraph]:
    """ELMo's ``step`` graph; ``input_shape`` is ``(batch, length, characters)``. The batch
    stays free; the length is fixed (ONNX export cannot write MXNet's ``foreach`` loop, so
    it is unrolled): export once per length served."""
    batch, length, chars = tuple(input_shape or (1, 4, model._elmo_char_encoder._max_chars))
    one = _flatten(model.begin_state(batch_size=1))
    states = _batch_free(one, _flatten(model.begin_state(batch_size=2)))
    trace = tuple(tuple(batch if d is None else d for d in shape) for shape in states)
    return [ExportGraph("step", ELMoStep(model, length), ((batch, length, chars), *trace),
                        ("int32",) + ("float32",) * len(trace),
                        ((None, length, chars), *states))]
