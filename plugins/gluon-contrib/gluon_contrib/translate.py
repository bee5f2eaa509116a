"""``gluon-hub translate``: translate an image with a trained CycleGAN generator.

    gluon-hub translate run/G_AB.params horse.jpg zebra.png --size 256

The generator's shape must match the parameters: ``--n-blocks`` and ``--ngf`` (or the
``config.json`` the training script writes next to them, which is read when present).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gluon-hub translate",
                                description="Translate an image with a trained CycleGAN generator.")
    p.add_argument("params", type=Path, help="generator parameters (G_AB.params or G_BA.params)")
    p.add_argument("input", type=Path, help="image to translate")
    p.add_argument("output", type=Path, help="where to write the result (.png, .jpg ...)")
    p.add_argument("--size", type=int, default=None,
                   help="resize the input to SIZE x SIZE first (default: the training size "
                        "from config.json, else 256)")
    p.add_argument("--n-blocks", type=int, default=None, help="residual blocks (default 9)")
    p.add_argument("--ngf", type=int, default=None, help="generator width (default 64)")
    return p


def _config(params: Path) -> dict:
    path = params.with_name("config.json")
    return json.loads(path.read_text()) if path.is_file() else {}


def translate(params: Path, source: Path, target: Path, size: int | None = None,
              n_blocks: int | None = None, ngf: int | None = None) -> Path:
    """Run the generator stored in ``params`` on ``source``; write and return ``target``."""
    import gluon_hub

    from .images import load_image, save_image

    if not params.is_file():
        raise FileNotFoundError(f"no parameters file {str(params)!r}")
    if not source.is_file():
        raise FileNotFoundError(f"no image {str(source)!r}")
    config = _config(params)
    size = size or config.get("size", 256)
    if size < 8 or size % 4:
        raise ValueError(f"--size must be a multiple of 4 and at least 8, got {size}")
    n_blocks, ngf = n_blocks or config.get("n_blocks", 9), ngf or config.get("ngf", 64)
    net = gluon_hub.load("cyclegan_resnet_9blocks", n_blocks=n_blocks, ngf=ngf)
    try:
        net.load_parameters(str(params))
    except AssertionError as exc:  # Gluon reports shape and name mismatches this way
        raise ValueError(
            f"{params} does not fit a generator with n_blocks={n_blocks}, ngf={ngf}: "
            f"{str(exc).splitlines()[0]}; pass the --n-blocks and --ngf used in training"
        ) from None
    return save_image(net(load_image(source, size)), target)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the plugin command; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        path = translate(args.params, args.input, args.output, args.size, args.n_blocks, args.ngf)
    except (FileNotFoundError, ValueError) as exc:
        print(f"gluon-hub translate: error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
