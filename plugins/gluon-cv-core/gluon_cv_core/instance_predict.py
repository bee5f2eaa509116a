"""``gluon-hub predict`` for instance segmentation (Mask R-CNN): instances as JSON, and a picture.

Preprocessing is GluonCV's Mask R-CNN test recipe (``presets.rcnn.load_test``): the shorter
side goes to the model's input side, the longer side stays within the network's ``max_size``
(area interpolation), then ``to_tensor`` and the model's mean/std (:func:`.detection_predict.to_input`).
Boxes are mapped back to the original image, and each instance's box-relative mask is pasted
onto the original image with :func:`.models.segmentation.mask_rcnn.paste_masks` (GluonCV's
``expand_mask``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .detection_predict import Detection, class_colour, draw_detections, to_input

__all__ = ["Instance", "draw_instances", "run", "segment_instances"]


@dataclass(frozen=True)
class Instance:
    """One object: class name, score, ``(x1, y1, x2, y2)`` and its ``(H, W)`` binary mask,
    all in original image pixels."""

    label: str
    score: float
    box: tuple[float, float, float, float]
    mask: np.ndarray = field(repr=False, compare=False)

    def as_json(self) -> dict[str, Any]:
        return {"class": self.label, "score": self.score, "box": list(self.box), "mask_area": int(self.mask.sum())}


def _instances(net: Any, x: Any, classes: Sequence[str], threshold: float, width: int,
               height: int) -> list[Instance]:
    """The network's instances above ``threshold``, best first, in original image pixels."""
    from .models.segmentation.mask_rcnn import paste_masks

    ids, scores, boxes, masks = (out[0].asnumpy() for out in net(x))
    ids, scores = ids[:, 0], scores[:, 0]
    keep = (ids >= 0) & (scores >= threshold)
    boxes = boxes[keep] * np.array([width / x.shape[3], height / x.shape[2]] * 2)
    full = paste_masks(masks[keep], boxes, (height, width))
    boxes = np.clip(boxes, 0, [width, height, width, height])
    order = np.argsort(-scores[keep], kind="stable")
    return [Instance(classes[int(i)], float(s), tuple(float(v) for v in b), m)  # type: ignore[arg-type]
            for i, s, b, m in zip(ids[keep][order], scores[keep][order], boxes[order], full[order])]


def segment_instances(net: Any, spec: Any, images: Sequence[str], threshold: float = 0.5,
                      ctx: Any = None) -> list[tuple[Any, list[Instance]]]:
    """``(decoded image, instances)`` for each image file, one forward pass per image (each
    keeps its own aspect ratio, as in GluonCV's demos)."""
    from gluon_hub.compat import mx

    from .data.images import read_image

    if not 0 <= threshold <= 1:
        raise ValueError(f"--threshold must be between 0 and 1, got {threshold}")
    ctx = ctx or mx.cpu()
    classes = list(net.classes)
    results = []
    for path in images:
        image = read_image(path)
        if image.ndim != 3 or image.shape[2] != 3:
            raise ValueError(f"image {path!r} has shape {image.shape}; expected height x width x 3")
        x = to_input(image, spec, max_size=net.max_size).as_in_context(ctx)
        results.append((image, _instances(net, x, classes, threshold, image.shape[1], image.shape[0])))
    return results


def draw_instances(image: Any, instances: Sequence[Instance], classes: Sequence[str], out: str,
                   alpha: float = 0.5) -> None:
    """Write ``image`` (HWC ``uint8``) to ``out`` with each mask blended in its class colour
    (``alpha`` opaque) and each box, class name and score drawn on top."""
    pixels = (image.asnumpy() if hasattr(image, "asnumpy") else np.asarray(image)).astype(np.float32)
    index = {name: i for i, name in enumerate(classes)}
    for inst in reversed(instances):  # the best instance ends up on top
        colour = np.array(class_colour(index.get(inst.label, 0)), dtype=np.float32)
        where = inst.mask.astype(bool)
        pixels[where] = pixels[where] * (1 - alpha) + colour * alpha
    boxes = [Detection(i.label, i.score, i.box) for i in instances]
    draw_detections(np.round(pixels).astype(np.uint8), boxes, classes, out)


def run(args: argparse.Namespace, spec: Any, pretrained: bool | str, ctx: Any) -> int:
    """``gluon-hub predict`` with a Mask R-CNN: one JSON object of instances per image (class,
    score, box, mask area in pixels) and, with ``--out``, the picture of them."""
    from .predict import _network

    if args.out and len(args.images) != 1:
        raise ValueError(f"--out draws one image, but {len(args.images)} were given; pass a single IMAGE")
    if args.classes:
        raise ValueError("--classes is for classifiers; a Mask R-CNN's --params file must have its classes")
    for path in args.images:  # before the network is built, which takes a while
        if not os.path.isfile(path):
            raise FileNotFoundError(f"image {path!r} does not exist")
    net = _network(spec, pretrained, args.params, ctx, {}, download=args.pretrained is not None)
    net.hybridize()  # each image keeps its aspect ratio, so shapes vary: no static_shape
    for path, (image, found) in zip(args.images, segment_instances(net, spec, args.images, args.threshold, ctx)):
        print(json.dumps({"image": path, "width": image.shape[1], "height": image.shape[0],
                          "instances": [i.as_json() for i in found]}))
        if args.out:
            draw_instances(image, found, net.classes, args.out)
    sys.stdout.flush()
    return 0
