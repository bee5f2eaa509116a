"""``gluon-hub predict`` for semantic segmentation: the share of each class, and a picture of the mask.

Preprocessing is GluonCV's segmentation demo: the whole image at its own size, ``to_tensor`` and the
model's mean/std, one forward pass; the first output (the main head) is resized to the image where
it is smaller, and each pixel takes its highest-scoring class. ``--out FILE.png`` blends the mask
over the image in the colours GluonCV draws masks with (``palettes.json``: VOC,
ADE20K, Cityscapes, MHP; other class lists get evenly spread hues).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

__all__ = ["ClassShare", "class_shares", "draw_mask", "palette", "predict_masks", "run"]

#: the labels a spec names (``module:ATTRIBUTE``) -> the palette drawn for them
_PALETTE_OF_LABELS = {"VOC_CLASSES": "voc", "ADE20K_CLASSES": "ade", "CITYSCAPES_CLASSES": "citys",
                      "MHPV1_CLASSES": "mhpv1"}
#: weight of the class colour in the overlay (the image keeps the rest)
ALPHA = 0.5


@dataclass(frozen=True)
class ClassShare:
    """A class present in a mask and the fraction of the image's pixels it covers."""

    label: str
    fraction: float

    def as_json(self) -> dict[str, Any]:
        return {"class": self.label, "fraction": self.fraction}


@lru_cache(maxsize=None)
def _palettes() -> dict[str, np.ndarray]:
    text = resources.files(__package__).joinpath("palettes.json").read_text(encoding="utf-8")
    return {name: np.array(rows, dtype=np.uint8) for name, rows in json.loads(text)["palettes"].items()}


def palette(spec: Any, num_classes: int) -> np.ndarray:
    """``(num_classes, 3)`` ``uint8`` colours: GluonCV's for the spec's dataset, else distinct hues."""
    from ..detection.predict import class_colour

    labels = (spec.input.labels or "") if spec is not None and spec.input is not None else ""
    name = _PALETTE_OF_LABELS.get(labels.rpartition(":")[2])
    colours = _palettes().get(name) if name else None
    if colours is not None and len(colours) == num_classes:
        return colours
    return np.array([class_colour(i) for i in range(num_classes)], dtype=np.uint8)


def predict_masks(net: Any, spec: Any, images: Sequence[str],
                  ctx: Any = None) -> Iterator[tuple[Any, np.ndarray, int]]:
    """``(decoded HWC uint8 image, (H, W) int32 class mask, number of classes)`` for each image file,
    one at a time (images keep their own sizes)."""
    from gluon_hub.compat import mx

    from ..common.images import read_image
    from .multiscale import first_output

    ctx = ctx or mx.cpu()
    for path in images:
        image = read_image(path)
        if image.ndim != 3 or image.shape[2] != 3:
            raise ValueError(f"image {path!r} has shape {image.shape}; expected height x width x 3")
        height, width = image.shape[:2]
        x = mx.nd.image.normalize(mx.nd.image.to_tensor(image), mean=spec.input.mean, std=spec.input.std)
        scores = first_output(net(x.expand_dims(0).as_in_context(ctx)))
        if scores.ndim != 4:
            raise ValueError(f"{spec.qualified_name!r} returned scores of shape {scores.shape}; a semantic "
                             "segmentation model returns (batch, classes, height, width)")
        if scores.shape[2:] != (height, width):
            scores = mx.nd.contrib.BilinearResize2D(scores, height=height, width=width)
        yield image, scores[0].argmax(axis=0).astype("int32").asnumpy(), scores.shape[1]


def class_shares(mask: np.ndarray, classes: Sequence[str]) -> list[ClassShare]:
    """The classes present in ``mask``, largest share of pixels first (ties: lower class index first)."""
    counts = np.bincount(mask.ravel(), minlength=len(classes))
    order = np.argsort(-counts, kind="stable")
    return [ClassShare(classes[i], float(counts[i] / mask.size)) for i in order if counts[i]]


def draw_mask(image: Any, mask: np.ndarray, colours: np.ndarray, out: str, alpha: float = ALPHA) -> None:
    """Write ``image`` (HWC ``uint8``) to ``out`` with each pixel tinted by its class colour."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("--out draws with Pillow, which is not installed: pip install Pillow") from None
    pixels = image.asnumpy() if hasattr(image, "asnumpy") else np.asarray(image)
    blended = (1 - alpha) * pixels.astype(np.float32) + alpha * colours[mask].astype(np.float32)
    directory = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"cannot write {out!r}: the folder {directory!r} does not exist")
    try:
        Image.fromarray(np.clip(np.rint(blended), 0, 255).astype(np.uint8)).save(out)
    except ValueError as exc:  # Pillow's "unknown file extension"
        raise ValueError(f"cannot write {out!r}: {exc}; use a .png or .jpg name") from None


def run(args: argparse.Namespace, spec: Any) -> int:
    """``gluon-hub predict`` with a semantic-segmentation model: print each image's class shares
    (the ``--topk`` largest; ``--json``: one object per image) and draw the mask with ``--out``."""
    from ..common.prediction import network, onnx_runner, start

    if args.runtime != "onnx":
        pretrained, ctx = start(args, spec)
    if args.out and len(args.images) != 1:
        raise ValueError(f"--out draws one image, but {len(args.images)} were given; pass a single IMAGE")
    if args.classes:
        raise ValueError("--classes is for classifiers; a segmentation model's --params file must have its classes")
    if args.topk < 1:
        raise ValueError("--topk must be at least 1")
    for path in args.images:  # before the network is built, which takes a while
        if not os.path.isfile(path):
            raise FileNotFoundError(f"image {path!r} does not exist")
    if args.runtime == "onnx":
        masks: Iterable[tuple[Any, np.ndarray, int]] = onnx_runner(args, spec).segment(args.images)
    else:
        net = network(spec, pretrained, args.params, ctx, {}, download=args.pretrained is not None)
        net.hybridize()  # images keep their own sizes: no static_shape
        masks = predict_masks(net, spec, args.images, ctx)
    for path, (image, mask, num_classes) in zip(args.images, masks):
        classes = spec.class_names(num_classes)
        shares = class_shares(mask, classes)[: args.topk]
        if args.json:
            print(json.dumps({"image": path, "width": mask.shape[1], "height": mask.shape[0],
                              "classes": [s.as_json() for s in shares]}))
        else:
            print(path)
            width = max(len(s.label) for s in shares)
            for share in shares:
                print(f"  {share.label:<{width}}  {share.fraction:.4f}")
        if args.out:
            draw_mask(image, mask, palette(spec, len(classes)), args.out)
    sys.stdout.flush()
    return 0
