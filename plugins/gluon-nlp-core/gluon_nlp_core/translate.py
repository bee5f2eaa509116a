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
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any, Sequence

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
    p.add_argument("--ctx", default="cpu", help="device: cpu or gpuN (default cpu)")
    return p


def detokenize(subwords: Sequence[str]) -> str:
    """Join subwords, merging each one marked with ``@@`` into the next.

    Examples
    --------
    >>> detokenize(["Gut@@", "en", "Morgen", "!"])
    'Guten Morgen !'
    """
    return " ".join(subwords).replace(_BPE_MARK + " ", "").removesuffix(_BPE_MARK)


def translate_lines(net: Any, vocab: Any, lines: Sequence[str], beam_size: int = 4,
                    alpha: float = 0.6, K: float = 5.0, max_length: int = 100,
                    batch_size: int = 16, ctx: Any = None) -> list[str]:
    """Translate BPE-tokenized ``lines`` with a :class:`TransformerNMT` and its vocabulary."""
    from gluon_hub.compat import mx

    ctx = ctx or mx.cpu()
    for name in ("bos_token", "eos_token"):
        if getattr(vocab, name, None) is None:
            raise ValueError(f"the vocabulary has no {name}; translation starts with BOS and "
                             "ends with EOS: use the model's vocabulary")
    bos, eos, pad = vocab[vocab.bos_token], vocab[vocab.eos_token], vocab[vocab.padding_token]
    limit = net.encoder._max_length
    outputs: list[str] = []
    for start in range(0, len(lines), batch_size):
        ids = [vocab[line.split()] + [eos] for line in lines[start:start + batch_size]]
        for i, row in enumerate(ids, start + 1):
            if len(row) > limit:
                raise ValueError(f"sentence {i} has {len(row) - 1} subwords; the model reads at "
                                 f"most {limit - 1} (plus EOS): split it")
        width = max(len(row) for row in ids)
        src = mx.nd.array([row + [pad] * (width - len(row)) for row in ids], ctx=ctx)
        lengths = mx.nd.array([len(row) for row in ids], ctx=ctx)
        tokens = net.translate(src, bos, eos, lengths, max_length=max_length,
                               beam_size=beam_size, alpha=alpha, K=K).asnumpy().astype(int)
        for row in tokens:
            ended = list(row).index(eos) if eos in row else len(row)
            outputs.append(detokenize(vocab.to_tokens([int(t) for t in row[:ended]])))
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
        raise FileNotFoundError(
            f"{missing.label} ({args.model!r}) is not in the cache or on a local "
            "mirror, and translate-text downloads only when asked: pass --pretrained to download the "
            "weights and vocabulary, or --params FILE / --random-weights with --vocab FILE.json"
        ) from None
    if args.params is not None:
        net.load_parameters(str(args.params), ctx=ctx)
    text = args.input.read_text("utf-8") if args.input else None
    lines = args.sentences or (text if text is not None else sys.stdin.read()).splitlines()
    for line in translate_lines(net, vocab, lines, args.beam_size, args.alpha, args.K,
                                args.max_length, args.batch_size, ctx):
        print(line)
    sys.stdout.flush()
    return 0
