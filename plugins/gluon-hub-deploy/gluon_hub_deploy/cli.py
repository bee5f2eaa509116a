"""``gluon-hub deploy``: write a C++, Java or Clojure project that runs a model through
MXNet's C API; ``gluon-hub convert``: publish models' weights as ONNX or safetensors files.
The hub calls :func:`main` (:func:`convert_main`) with the arguments after the command; the errors it
raises on purpose (``ValueError``, ``OSError``, the hub's own) are printed by the hub as one
``gluon-hub: error: ...`` line."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Sequence

_PRETRAINED_DEFAULT = "\0default"  # --pretrained with no tag: the model's default weights


def build_parser() -> argparse.ArgumentParser:
    from . import LANGUAGES

    p = argparse.ArgumentParser(
        prog="gluon-hub deploy",
        description="Export NAME and write DIR: the symbol and params, a program in LANG that "
        "calls MXNet's C predict API (libmxnet.so from the mxnet wheel), build.sh and run. "
        "'DIR/build.sh && DIR/run INPUT' prints the outputs as JSON; INPUT is an image or a "
        "raw little-endian float32 tensor (.f32). See docs/deploy.md.",
    )
    p.add_argument("name", metavar="NAME", nargs="?",
                   help="the model to deploy (or give an exported graph with --symbol)")
    p.add_argument("--lang", required=True, choices=LANGUAGES, help="the project's language")
    p.add_argument("-o", "--output", required=True, type=Path, metavar="DIR", help="the project folder")
    weights = p.add_mutually_exclusive_group()
    weights.add_argument("--pretrained", nargs="?", const=_PRETRAINED_DEFAULT, metavar="TAG",
                         help="published weights (the default ones, or the tag's) through the cache")
    weights.add_argument("--params", type=Path, metavar="FILE",
                         help="a .params file (net.save_parameters; with --symbol, the exported one)")
    p.add_argument("--symbol", type=Path, metavar="FILE",
                   help="deploy an exported graph (NAME-symbol.json, with its --params and --shape) "
                   "instead of a named model; operators MXNet does not register, and Custom, are refused")
    p.add_argument("--shape", action="append", metavar="D0,D1,...",
                   help="an input's shape with the batch axis, once per input in order "
                   "(default: batch 1 of the spec's shapes)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the plugin command; returns the exit code."""
    return _deploy(build_parser().parse_args(argv))


def _shape(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(d) for d in text.split(","))
    except ValueError:
        raise ValueError(f"--shape {text!r} is not comma-separated integers such as 1,3,224,224") from None


def _deploy(args: argparse.Namespace) -> int:
    from . import deploy

    pretrained: bool | str = False
    if args.pretrained is not None:
        pretrained = True if args.pretrained == _PRETRAINED_DEFAULT else args.pretrained
    shapes = [_shape(s) for s in args.shape] if args.shape else None
    shape = shapes[0] if shapes and len(shapes) == 1 else shapes
    if args.symbol is not None:
        if args.name is not None or args.pretrained is not None:
            raise ValueError("--symbol deploys an exported graph: give it no NAME and no --pretrained")
        if args.params is None or shapes is None:
            raise ValueError("--symbol needs the graph's --params FILE and one --shape D0,D1,... per input")
        from ._symbol_check import import_symbol_block

        folder = deploy(import_symbol_block(args.symbol, args.params), args.output, args.lang,
                        input_shape=shape)
    elif args.name is None:
        raise ValueError("give the NAME of a model to deploy, or an exported graph with --symbol FILE")
    else:
        folder = deploy(args.name, args.output, args.lang, pretrained=pretrained, params=args.params,
                        input_shape=shape)
    print(folder)
    print(f"build and run it: {folder}/build.sh && {folder}/run INPUT", flush=True)
    return 0


def build_convert_parser() -> argparse.ArgumentParser:
    from ._convert import FORMATS

    p = argparse.ArgumentParser(
        prog="gluon-hub convert",
        description="Convert each NAME's weights to ONNX (or safetensors) and publish the files into DIR, "
        "named by their hash, with DIR/weights.json listing them under the tag TAG.onnx "
        "(TAG.safetensors). 'gluon-hub serve DIR', 'gluon-hub bundle NAME:TAG.onnx --from-dir DIR' "
        "and 'gluon-hub import' carry them to machines without MXNet, where "
        "gluon_hub.publishing.fetch_converted(NAME) finds them. See docs/convert.md.",
    )
    p.add_argument("names", metavar="NAME", nargs="+", help="the models to convert")
    p.add_argument("-o", "--output", required=True, type=Path, metavar="DIR", help="the output (mirror) folder")
    weights = p.add_mutually_exclusive_group(required=True)
    weights.add_argument("--pretrained", nargs="?", const=_PRETRAINED_DEFAULT, metavar="TAG",
                         help="published weights (the default ones, or the tag's) through the cache")
    weights.add_argument("--params", type=Path, metavar="FILE",
                         help="a .params or .safetensors file of the one NAME (net.save_parameters)")
    p.add_argument("--format", choices=tuple(FORMATS), default="onnx", help="what to write (default: %(default)s)")
    p.add_argument("--tag", help="the tag to record before the format suffix (default: the weights' tag, "
                   "'default' for --params)")
    return p


def convert_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``gluon-hub convert``; prints one line per file written."""
    from ._convert import convert

    args = build_convert_parser().parse_args(argv)
    pretrained: bool | str = False
    if args.pretrained is not None:
        pretrained = True if args.pretrained == _PRETRAINED_DEFAULT else args.pretrained
    for variant in convert(args.names, args.output, pretrained=pretrained, params=args.params,
                           format=args.format, tag=args.tag):
        print(f"{args.output / variant.file.filename}  {variant.file.hash}  tag {variant.tag}", flush=True)
    return 0
