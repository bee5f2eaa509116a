"""``gluon-hub predict`` for instance segmentation (Mask R-CNN): instances as JSON, and a picture.

Preprocessing is GluonCV's Mask R-CNN test recipe (``presets.rcnn.load_test``): the shorter
side goes to the model's input side, the longer side stays within the network's ``max_size``
(OpenCV bicubic, MXNet's ``interp=2``), then ``to_tensor`` and the model's mean/std (:func:`.predict.to_input`).
Boxes are mapped back to the original image, and each instance's box-relative mask is pasted
onto the original image with :func:`.masks.paste_masks` (GluonCV's ``expand_mask``).
:func:`instances` is numpy only: the ONNX runner (:class:`.onnx_runner.InstanceSegmenter`)
decodes with it too.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .masks import paste_masks
from .predict import Detection, class_colour, draw_detections, each_image

__all__ = ["Instance", "draw_instances", "instances", "rcnn_max_size", "run", "segment_instances"]


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
    ids, scores, boxes, masks = (out[0].asnumpy() for out in net(x))
    return instances(ids, scores, boxes, masks, x.shape[2:], (height, width), classes, threshold)


def instances(ids: np.ndarray, scores: np.ndarray, boxes: np.ndarray, masks: np.ndarray,
              input_size: Sequence[int], image_size: Sequence[int], classes: Sequence[str],
              threshold: float) -> list[Instance]:
    """One image's instances above ``threshold``, best first, in image pixels, from Mask R-CNN's
    outputs ``(K, 1)`` ids, ``(K, 1)`` scores, ``(K, 4)`` boxes in network-input pixels and
    ``(K, M, M)`` box masks; ``input_size`` and ``image_size`` are ``(height, width)``.

    numpy only: the MXNet path and the ONNX runner decode the same way.
    """
    height, width = image_size
    ids, scores = ids.reshape(-1), scores.reshape(-1)
    keep = (ids >= 0) & (scores >= threshold)
    boxes = boxes.reshape(-1, 4)[keep] * np.array([width / input_size[1], height / input_size[0]] * 2)
    full = paste_masks(masks[keep], boxes, (height, width))
    boxes = np.clip(boxes, 0, [width, height, width, height])
    order = np.argsort(-scores[keep], kind="stable")
    names = [classes[int(i)] if int(i) < len(classes) else f"class {int(i)}" for i in ids[keep][order]]
    return [Instance(n, float(s), tuple(float(v) for v in b), m)  # type: ignore[arg-type]
            for n, s, b, m in zip(names, scores[keep][order], boxes[order], full[order])]


def rcnn_max_size(spec: Any) -> int:
    """The longer-side cap of a Mask R-CNN's test images: its network's ``max_size``, 1333 in
    GluonCV's COCO configurations; 512 for ``custom_mask_rcnn_fpn``, whose one RPN level lays
    its 128 x 128 anchor cells on the stride-4 P2 map, so that a side beyond 512 pixels fails
    in MXNet (as in GluonCV) under its network's ``max_size`` of 1000."""
    return 512 if spec.kwargs.get("config") == "custom_fpn" else 1333


def segment_instances(net: Any, spec: Any, images: Sequence[str], threshold: float = 0.5,
                      ctx: Any = None) -> list[tuple[Any, list[Instance]]]:
    """``(decoded image, instances)`` for each image file, one forward pass per image (each
    keeps its own aspect ratio, as in GluonCV's demos), the longer side within the network's
    ``max_size`` and :func:`rcnn_max_size`."""
    return each_image(net, spec, images, threshold, ctx, _instances, max_size=min(net.max_size, rcnn_max_size(spec)))


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
    from ..common.prediction import check_images, onnx_runner, print_each_image, print_found, start

    if args.runtime == "onnx":
        runner = onnx_runner(args, spec)
        check_images(args, "a Mask R-CNN")
        found = runner.segment(args.images, args.threshold)
        return print_found(args, found, "instances", lambda image, items: runner.draw(image, items, args.out))
    pretrained, ctx = start(args, spec)
    return print_each_image(args, spec, pretrained, ctx, segment_instances, draw_instances, "instances",
                            "a Mask R-CNN")
