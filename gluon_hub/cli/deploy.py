"""``deploy``: write a C++, Java or Clojure project that runs a model through MXNet's C API."""

from __future__ import annotations

import argparse
from pathlib import Path

_PRETRAINED_DEFAULT = "\0default"  # --pretrained with no tag: the model's default weights


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    from ..deploy import LANGUAGES

    p = subparsers.add_parser(
        "deploy", help="write a C++/Java/Clojure project that runs a model without Python",
        description="Export NAME and write DIR: the symbol and params, a program in LANG that "
        "calls MXNet's C predict API (libmxnet.so from the mxnet wheel), build.sh and run. "
        "'DIR/build.sh && DIR/run INPUT' prints the outputs as JSON; INPUT is an image or a "
        "raw little-endian float32 tensor (.f32). See docs/deploy.md.",
    )
    p.add_argument("name", metavar="NAME", help="the model to deploy")
    p.add_argument("--lang", required=True, choices=LANGUAGES, help="the project's language")
    p.add_argument("-o", "--output", required=True, type=Path, metavar="DIR", help="the project folder")
    weights = p.add_mutually_exclusive_group()
    weights.add_argument("--pretrained", nargs="?", const=_PRETRAINED_DEFAULT, metavar="TAG",
                         help="published weights (the default ones, or the tag's) through the cache")
    weights.add_argument("--params", type=Path, metavar="FILE", help="a .params file (net.save_parameters)")
    p.add_argument("--shape", action="append", metavar="D0,D1,...",
                   help="an input's shape with the batch axis, once per input in order "
                   "(default: batch 1 of the spec's shapes)")
    p.set_defaults(run=_deploy)


def _shape(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(d) for d in text.split(","))
    except ValueError:
        raise ValueError(f"--shape {text!r} is not comma-separated integers such as 1,3,224,224") from None


def _deploy(args: argparse.Namespace) -> int:
    from ..deploy import deploy

    pretrained: bool | str = False
    if args.pretrained is not None:
        pretrained = True if args.pretrained == _PRETRAINED_DEFAULT else args.pretrained
    shapes = [_shape(s) for s in args.shape] if args.shape else None
    folder = deploy(args.name, args.output, args.lang, pretrained=pretrained, params=args.params,
                    input_shape=shapes[0] if shapes and len(shapes) == 1 else shapes)
    print(folder)
    print(f"build and run it: {folder}/build.sh && {folder}/run INPUT", flush=True)
    return 0
