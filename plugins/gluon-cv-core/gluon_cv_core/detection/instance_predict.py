"""``gluon-hub predict`` for instance segmentation (Mask R-CNN): instances as JSON, and a picture.

Preprocessing is GluonCV's Mask R-CNN test recipe (``presets.rcnn.load_test``): the shorter
side goes to the model's input side, the longer side stays within the network's ``max_size``
(OpenCV bicubic, MXNet's ``interp=2``), then ``to_tensor`` and the model's mean/std (:func:`.predict.to_input`).
Boxes are mapped back to the original image, and each instance's box-relative mask is pasted
onto the original image with :func:`.models.mask_rcnn.paste_masks` (GluonCV's
``expand_mask``).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .predict import Detection, class_colour, draw_detections, each_image

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
    from .models.mask_rcnn import paste_masks

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
    return each_image(net, spec, images, threshold, ctx, _instances, max_size=net.max_size)


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


def run(args: argparse.Namespace, spec: Any) -> int:
    """``gluon-hub predict`` with a Mask R-CNN: one JSON object of instances per image (class,
    score, box, mask area in pixels) and, with ``--out``, the picture of them."""
    from ..common.prediction import print_each_image, start

    pretrained, ctx = start(args, spec)
    return print_each_image(args, spec, pretrained, ctx, segment_instances, draw_instances, "instances",
                            "a Mask R-CNN")
