"""``gluon-hub translate-text MODEL [SENTENCE...]``: translate text with a Transformer by beam search.

    gluon-hub translate-text transformer_en_de_512 "a small test ." --beam-size 4

Sentences come as arguments, or one per line from ``--input FILE`` or standard input. They
must already be in the model's subword form: ``transformer_en_de_512`` reads the
Moses-tokenized, BPE-split text of GluonNLP's WMT2014 data (``"Gut@@ en Morgen"``), split
on whitespace here and looked up in the model's vocabulary (unknown subwords become
``<unk>``), with EOS appended as in GluonNLP's training data. Output subwords are merged
back (``"@@ "`` joins) and printed one line per input, in order.

Weights: the published ones, as with ``gluon-hub predict`` only downloaded when asked:
without a weights option they (and the published vocabulary) are used if they are already in
the cache or on a local mirror; ``--pretrained [TAG]`` downloads them (TAG picks a variant),
``--params FILE`` loads your own, and ``--random-weights`` tries the command on an untrained
network (its output is then meaningless). ``--vocab FILE`` replaces the published vocabulary by a JSON one
(``Vocab.to_json``, GluonNLP's format); the network is then built for its size.

``--runtime onnx`` translates without MXNet: the Transformer's exported ``encoder`` and
``decoder_step`` graphs (``--model-file FILE``, the path given to ``gluon_hub.export``; else
the files ``gluon-hub convert`` wrote, found by model name through the cache) in onnxruntime,
with the same greedy and beam search (:class:`gluon_nlp_core.onnx_runner.Translator`), so
the tokens are the MXNet runtime's. ``--json`` prints ``{"source", "translation",
"subwords"}`` a line, the same for both runtimes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

#: GluonNLP's subword continuation mark: "Gut@@ en" is one word.
_BPE_MARK = "@@"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gluon-hub translate-text",
        description="Translate sentences with a Transformer translation model by beam search.")
    p.add_argument("model", help="model name, for example transformer_en_de_512")
    p.add_argument("sentences", nargs="*", metavar="SENTENCE",
                   help="BPE-tokenized sentences (default: one per line from --input or stdin)")
    p.add_argument("--input", type=Path, metavar="FILE", help="read sentences from FILE, one a line")
    weights = p.add_mutually_exclusive_group()
    weights.add_argument("--pretrained", nargs="?", const=True, default=None, metavar="TAG",
                         help="use the published weights (the default ones, or those tagged TAG), "
                         "downloading them and the vocabulary if they are not cached. Without any "
                         "weights option they are used only if already cached or on a local mirror")
    weights.add_argument("--params", type=Path, metavar="FILE", help="load weights from a .params file")
    weights.add_argument("--random-weights", action="store_true",
                         help="run the untrained network (to try the command; output is meaningless)")
    p.add_argument("--vocab", type=Path, metavar="FILE.json",
                   help="vocabulary JSON to use instead of the published one")
    p.add_argument("--beam-size", type=int, default=4, help="beam size (default 4; 1 is greedy)")
    p.add_argument("--alpha", type=float, default=0.6, help="length penalty exponent (default 0.6)")
    p.add_argument("--K", type=float, default=5.0, help="length penalty offset (default 5)")
    p.add_argument("--max-length", type=int, default=100,
                   help="most output subwords per sentence (default 100)")
    p.add_argument("--batch-size", type=int, default=16, help="sentences per batch (default 16)")
    p.add_argument("--ctx", default="cpu", help="device: cpu or gpuN (default cpu; MXNet runtime)")
    p.add_argument("--runtime", choices=("mxnet", "onnx"), default="mxnet",
                   help="mxnet (default) or onnx: the exported encoder and decoder-step graphs in "
                   "onnxruntime, without MXNet (the same tokens)")
    p.add_argument("--model-file", type=Path, metavar="FILE.onnx",
                   help="onnx runtime: the path given to gluon_hub.export (FILE-encoder.onnx and "
                   "FILE-decoder_step.onnx beside it); default the files gluon-hub convert wrote, "
                   "found through the cache")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object a line: the source, its translation and the subwords, "
                   "the same for both runtimes")
    return p


def detokenize(subwords: Sequence[str]) -> str:
    """Join subwords, merging each one marked with ``@@`` into the next.

    Examples
    --------
    >>> detokenize(["Gut@@", "en", "Morgen", "!"])
    'Guten Morgen !'
    """
    return " ".join(subwords).replace(_BPE_MARK + " ", "").removesuffix(_BPE_MARK)


def special_ids(vocab: Any) -> tuple[int, int, int]:
    """The vocabulary's BOS, EOS and padding ids; translation starts with BOS and ends with EOS."""
    for name in ("bos_token", "eos_token"):
        if getattr(vocab, name, None) is None:
            raise ValueError(f"the vocabulary has no {name}; translation starts with BOS and "
                             "ends with EOS: use the model's vocabulary")
    return vocab[vocab.bos_token], vocab[vocab.eos_token], vocab[vocab.padding_token]


def source_batch(vocab: Any, lines: Sequence[str], limit: int, first: int = 1) -> tuple[list[list[int]], int]:
    """The ids of BPE-tokenized ``lines`` with EOS appended, and the width of the longest.

    ``limit`` is the most positions the encoder has; ``first`` numbers the first line in
    the error that names a sentence too long for it.
    """
    eos = special_ids(vocab)[1]
    ids = [vocab[line.split()] + [eos] for line in lines]
    for i, row in enumerate(ids, first):
        if len(row) > limit:
            raise ValueError(f"sentence {i} has {len(row) - 1} subwords; the model reads at "
                             f"most {limit - 1} (plus EOS): split it")
    return ids, max(len(row) for row in ids)


def target_subwords(vocab: Any, row: Sequence[int]) -> list[str]:
    """The subwords of one translation's ids, up to its first EOS."""
    eos = special_ids(vocab)[1]
    row = [int(t) for t in row]
    return vocab.to_tokens(row[:row.index(eos)] if eos in row else row)


def translate_lines(net: Any, vocab: Any, lines: Sequence[str], beam_size: int = 4,
                    alpha: float = 0.6, K: float = 5.0, max_length: int = 100,
                    batch_size: int = 16, ctx: Any = None) -> list[str]:
    """Translate BPE-tokenized ``lines`` with a :class:`TransformerNMT` and its vocabulary."""
    return [detokenize(s) for s in translate_subwords(net, vocab, lines, beam_size, alpha, K, max_length,
                                                      batch_size, ctx)]


def translate_subwords(net: Any, vocab: Any, lines: Sequence[str], beam_size: int = 4,
                       alpha: float = 0.6, K: float = 5.0, max_length: int = 100,
                       batch_size: int = 16, ctx: Any = None) -> list[list[str]]:
    """:func:`translate_lines` before the subwords are joined."""
    from gluon_hub.compat import mx

    ctx = ctx or mx.cpu()
    bos, eos, pad = special_ids(vocab)
    outputs: list[list[str]] = []
    for start in range(0, len(lines), batch_size):
        ids, width = source_batch(vocab, lines[start:start + batch_size], net.encoder._max_length, start + 1)
        src = mx.nd.array([row + [pad] * (width - len(row)) for row in ids], ctx=ctx)
        lengths = mx.nd.array([len(row) for row in ids], ctx=ctx)
        tokens = net.translate(src, bos, eos, lengths, max_length=max_length,
                               beam_size=beam_size, alpha=alpha, K=K).asnumpy().astype(int)
        outputs += [target_subwords(vocab, row) for row in tokens]
    return outputs


def _vocab_and_tag(args: argparse.Namespace) -> tuple[Any, str | None]:
    """The vocabulary to use and the weight tag (None without published weights)."""
    import gluon_hub

    from .text.pretrained import load_vocab
    from .text.vocab import Vocab

    spec = gluon_hub.info(args.model)
    if spec.task != "machine-translation":
        raise ValueError(f"{spec.qualified_name!r} is a {spec.task} model; translate-text needs a "
                         "machine-translation model such as transformer_en_de_512")
    published = not (args.random_weights or args.params)
    tag = spec.weight(args.pretrained or True).tag if published else None
    if args.vocab is not None and not args.vocab.is_file():
        raise FileNotFoundError(f"no vocabulary file {str(args.vocab)!r}")
    vocab = Vocab.from_json(args.vocab.read_text("utf-8")) if args.vocab is not None else None
    if vocab is not None and tag is None:
        return vocab, None
    from ._model_specs import _load_data

    entries = _load_data()["models"][spec.name]["weights"]
    entry = next(e for e in entries if e["tag"] == (tag or entries[0]["tag"]))
    if vocab is None:
        return load_vocab(entry["vocab"]), tag
    if len(vocab) != entry["vocab_size"]:
        raise ValueError(f"{args.vocab} has {len(vocab)} tokens but the {tag} weights of "
                         f"{spec.name} need {entry['vocab_size']} ({entry['vocab']!r}); drop "
                         "--vocab, or pass --params / --random-weights with it")
    return vocab, tag


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``gluon-hub translate-text``; returns the exit code."""
    args = build_parser().parse_args(argv)
    if args.beam_size < 1 or args.batch_size < 1 or args.max_length < 1:
        raise ValueError("--beam-size, --batch-size and --max-length must be at least 1")
    if args.sentences and args.input:
        raise ValueError("give sentences as arguments or with --input FILE, not both")
    if args.input is not None and not args.input.is_file():
        raise FileNotFoundError(f"no input file {str(args.input)!r}")
    if args.params is not None and not args.params.is_file():
        raise FileNotFoundError(f"no parameters file {str(args.params)!r}")
    if args.runtime == "onnx":
        translate = _onnx_translator(args)
    else:
        if args.model_file is not None:
            raise ValueError("--model-file applies to --runtime onnx; the MXNet runtime takes --params FILE")
        translate = _mxnet_translator(args)
    text = args.input.read_text("utf-8") if args.input else None
    lines = args.sentences or (text if text is not None else sys.stdin.read()).splitlines()
    for line, subwords in zip(lines, translate(lines)):
        if args.json:
            print(json.dumps({"source": line, "translation": detokenize(subwords), "subwords": subwords},
                             ensure_ascii=False))
        else:
            print(detokenize(subwords))
    sys.stdout.flush()
    return 0


def _missing_offline(args: argparse.Namespace, label: str, options: str) -> FileNotFoundError:
    return FileNotFoundError(
        f"{label} ({args.model!r}) is not in the cache or on a local mirror, and translate-text "
        f"downloads only when asked: pass --pretrained to download {options}")


def _mxnet_translator(args: argparse.Namespace) -> Callable[[Sequence[str]], list[list[str]]]:
    """The MXNet model with its weights and vocabulary, as a function of the lines."""
    import gluon_hub
    from gluon_hub.cache import OfflineMissError, offline
    from gluon_hub.compat import mx

    ctx = mx.gpu(int(args.ctx[3:] or 0)) if args.ctx.startswith("gpu") else mx.cpu()
    if args.random_weights:
        print("gluon-hub translate-text: the weights are RANDOM (--random-weights); the "
              "translations below are meaningless", file=sys.stderr)
    try:
        with contextlib.nullcontext() if args.pretrained is not None else offline():
            vocab, tag = _vocab_and_tag(args)
            net = gluon_hub.load(args.model, pretrained=tag or False, ctx=ctx, vocab_size=len(vocab))
    except OfflineMissError as missing:
        if args.pretrained is not None:  # asked to download, but GLUON_HUB_OFFLINE=1 forbids it
            raise
        raise _missing_offline(args, missing.label, "the weights and vocabulary, or --params FILE / "
                               "--random-weights with --vocab FILE.json") from None
    if args.params is not None:
        net.load_parameters(str(args.params), ctx=ctx)
    return lambda lines: translate_subwords(net, vocab, lines, args.beam_size, args.alpha, args.K,
                                            args.max_length, args.batch_size, ctx)


def _onnx_translator(args: argparse.Namespace) -> Callable[[Sequence[str]], list[list[str]]]:
    """The exported graphs in onnxruntime (``gluon_nlp_core.onnx_runner.Translator``), no MXNet."""
    import gluon_hub
    import gluon_hub.runtime
    from gluon_hub.cache import OfflineMissError, offline

    for given, option in ((args.params, "--params"), (args.random_weights, "--random-weights"),
                          (args.ctx != "cpu", "--ctx")):
        if given:
            raise ValueError(f"{option} applies to the MXNet runtime; --runtime onnx runs the exported graphs "
                             "(--model-file FILE, else the converted files found by model name)")
    spec = gluon_hub.info(args.model)
    if spec.task != "machine-translation":
        raise ValueError(f"{spec.qualified_name!r} is a {spec.task} model; translate-text needs a "
                         "machine-translation model such as transformer_en_de_512")
    if args.vocab is not None and not args.vocab.is_file():
        raise FileNotFoundError(f"no vocabulary file {str(args.vocab)!r}")
    from .text.vocab import Vocab

    vocab = Vocab.from_json(args.vocab.read_text("utf-8")) if args.vocab is not None else None
    tag = args.pretrained if isinstance(args.pretrained, str) else None
    try:
        with contextlib.nullcontext() if args.pretrained is not None else offline():
            runner = gluon_hub.runtime.load(args.model, args.model_file, tag=tag, vocab=vocab)
    except OfflineMissError as missing:
        if args.pretrained is not None:
            raise
        raise _missing_offline(args, missing.label, "the converted graphs and the vocabulary, or give "
                               "--model-file FILE and --vocab FILE.json") from None
    return lambda lines: runner.translate_subwords(lines, args.beam_size, args.alpha, args.K, args.max_length,
                                                   args.batch_size)
