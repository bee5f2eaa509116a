"""Perplexity of a word-level language model on WikiText-format text.

The corpus is read as WikiText ships it: whitespace tokens, ``<eos>`` closing every
non-empty line. Its token ids are laid out in ``--batch-size`` columns, time-major
``(length, batch)``, the few tokens that do not fill the last row dropped (as GluonNLP's
corpus batchify does). The model reads the columns ``--bptt`` steps at a time and
carries its recurrent state from one chunk to the next, so every token but the first of
each column is predicted from all of the column before it. Perplexity is
``exp(mean negative log-likelihood)`` over those predicted tokens.

The vocabulary is ``--vocab-file``, else the published one of the ``--pretrained``
weights (unless ``--params`` gives a model of your own), else built from the training
file (unknown token first, then ``<eos>``, then the tokens by falling frequency).

Example::

    python -m gluon_nlp_core.scripts.evaluate_lm --model awd_lstm_lm_1150 --segment test
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np

import gluon_hub
from gluon_hub.compat import mx

from ..text import Vocab, count_tokens, load_vocab
from . import _common

__all__ = ["batchify_corpus", "corpus_vocab", "main"]

_DATASETS = ("wikitext2", "wikitext103")


def corpus_vocab(tokens: Sequence[str]) -> Vocab:
    """The vocabulary GluonNLP's language-model scripts build from a training corpus.

    Examples
    --------
    >>> corpus_vocab("b a b <eos>".split()).idx_to_token
    ['<unk>', '<eos>', 'b', 'a']
    """
    return Vocab(count_tokens(tokens), padding_token=None, bos_token=None)


def batchify_corpus(ids: Sequence[int], batch_size: int) -> np.ndarray:
    """Token ids as ``batch_size`` contiguous columns, shape ``(length, batch_size)``.

    Examples
    --------
    >>> batchify_corpus(list(range(7)), 2).tolist()
    [[0, 3], [1, 4], [2, 5]]
    """
    rows = len(ids) // batch_size
    if rows < 2:
        raise ValueError(f"{len(ids)} tokens are too few for {batch_size} columns of at least "
                         "2 tokens: give a smaller --batch-size")
    return np.asarray(ids[:rows * batch_size], dtype=np.int32).reshape(batch_size, rows).T


def _detach(state: Any) -> Any:
    """The recurrent state cut from the graph, whatever its nesting (AWD: one list per layer)."""
    if isinstance(state, (list, tuple)):
        return [_detach(s) for s in state]
    return state.detach()


def perplexity(model: Any, data: np.ndarray, bptt: int, ctx: Any) -> tuple[float, float, int]:
    """``(perplexity, mean NLL, predicted tokens)`` of ``model`` over ``(length, batch)`` ids."""
    data_nd = mx.nd.array(data, ctx=ctx, dtype="int32")
    state = model.begin_state(batch_size=data.shape[1], ctx=ctx)
    total, count = 0.0, 0
    loss = mx.gluon.loss.SoftmaxCELoss()
    for start in range(0, data.shape[0] - 1, bptt):
        steps = min(bptt, data.shape[0] - 1 - start)
        inputs = data_nd[start:start + steps]
        targets = data_nd[start + 1:start + 1 + steps]
        scores, state = model(inputs, state)
        state = _detach(state)
        total += float(loss(scores.reshape(-3, 0), targets.reshape(-1)).sum().asscalar())
        count += steps * data.shape[1]
    mean = total / count
    return math.exp(mean), mean, count


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gluon_nlp_core.scripts.evaluate_lm",
        description="Perplexity of a language model on WikiText-format text.")
    parser.add_argument("--dataset", choices=_DATASETS, default="wikitext2",
                        help="corpus to read (default: wikitext2)")
    parser.add_argument("--data-dir", type=Path,
                        help="folder holding wiki.train.tokens, wiki.valid.tokens and "
                        "wiki.test.tokens (default: download through the hub's cache)")
    parser.add_argument("--segment", choices=("val", "test"), default="test",
                        help="segment to evaluate (default: test)")
    parser.add_argument("--params", type=Path, metavar="FILE",
                        help="parameter file of your own model (saved with save_parameters), "
                        "loaded instead of --pretrained weights")
    parser.add_argument("--batch-size", type=int, default=80,
                        help="columns the corpus is laid out in (default: 80)")
    parser.add_argument("--bptt", type=int, default=70,
                        help="time steps per forward pass; the state carries over (default: 70)")
    parser.add_argument("--output", type=Path, metavar="JSON",
                        help="also write the results to this file")
    _common.add_model_arguments(
        parser, "standard_lstm_lm_200", "wikitext-2",
        '{"embed_size": 64, "hidden_size": 64, "num_layers": 1}')
    return parser


def _vocab(args: argparse.Namespace) -> Vocab:
    if args.vocab_file is not None:
        return _common.read_vocab(args.vocab_file)
    tag = _common.weight_tag(args)
    if tag is not None and args.params is None:
        return load_vocab(tag)
    train = gluon_hub.load_dataset(args.dataset, segment="train", root=_root(args))
    return corpus_vocab(list(train))


def _root(args: argparse.Namespace) -> str | None:
    return None if args.data_dir is None else str(args.data_dir)


def _model(args: argparse.Namespace, vocab: Vocab, ctx: Any) -> Any:
    kwargs = _common.model_kwargs(args, vocab)
    tag = _common.weight_tag(args)
    if args.params is not None:
        model = gluon_hub.load(args.model, pretrained=False, ctx=ctx, **kwargs)
        model.load_parameters(str(args.params), ctx=ctx)
        return model
    if tag is None:
        _common.log("warning: --pretrained none without --params evaluates random weights")
    return gluon_hub.load(args.model, pretrained=tag or False, ctx=ctx, **kwargs)


def main(argv: Sequence[str] | None = None) -> int:
    """Evaluate, print and optionally save the results; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        for name in ("batch_size", "bptt"):
            _common.positive("--" + name.replace("_", "-"), getattr(args, name))
        return _run(args)
    except (ValueError, KeyError, FileNotFoundError) as exc:
        parser.error(str(exc))
    return 2


def _run(args: argparse.Namespace) -> int:
    ctx = _common.context(args)
    vocab = _vocab(args)
    eos = vocab.special_tokens.get("eos_token")
    if eos is None:
        raise ValueError("the vocabulary has no eos_token, which ends every WikiText line")
    corpus = gluon_hub.load_dataset(args.dataset, segment=args.segment, root=_root(args),
                                    eos=eos)
    data = batchify_corpus(vocab[list(corpus)], args.batch_size)
    model = _model(args, vocab, ctx)
    model.hybridize()
    ppl, nll, count = perplexity(model, data, args.bptt, ctx)
    result = {"model": args.model, "segment": args.segment, "perplexity": ppl,
              "mean_nll": nll, "tokens": count}
    if args.output is not None:
        _common.write_json(args.output, result)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
