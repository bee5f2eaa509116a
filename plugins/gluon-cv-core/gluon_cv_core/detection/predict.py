"""``gluon-hub predict`` for object detectors: boxes as JSON, and optionally a picture of them.

Preprocessing is GluonCV's test-time recipe for its detection demos (``load_test`` of the SSD,
YOLOv3 and CenterNet presets): the shorter side goes to the model's input side, the longer side
stays within ``max_size`` (the aspect ratio is kept; the detectors take any input size), OpenCV
bicubic interpolation (``interp=2``, which MXNet's docs call area-based), then ``to_tensor`` and the model's mean/std. The network's boxes, in
resized-image pixels, are mapped back to the original image and clipped to it.
"""

from __future__ import annotations

import argparse
import colorsys
import os
from dataclasses import dataclass
from typing import Any, Callable, Sequence

__all__ = ["Detection", "class_colour", "detect", "draw_detections", "resize_short_within", "to_input"]

#: GluonCV's default cap on the longer side of a test image
MAX_SIZE = 1024


@dataclass(frozen=True)
class Detection:
    """One detected object: class name, score and ``(x1, y1, x2, y2)`` in original image pixels."""

    label: str
    score: float
    box: tuple[float, float, float, float]

    def as_json(self) -> dict[str, Any]:
        return {"class": self.label, "score": self.score, "box": list(self.box)}


def resize_short_within(image: Any, short: int, max_size: int = MAX_SIZE) -> Any:
    """``image`` (HWC ``uint8`` NDArray) with its shorter side ``short``, longer at most ``max_size``.

    The new size is rounded as GluonCV rounds it, so the network sees the same pixels.
    """
    from gluon_hub.compat import mx

    height, width = image.shape[:2]
    if height < 1 or width < 1:
        raise ValueError(f"the image is empty ({height}x{width} pixels)")
    small, large = min(height, width), max(height, width)
    scale = short / small
    if round(scale * large) > max_size:
        scale = max_size / large
    new_w, new_h = max(1, int(round(width * scale))), max(1, int(round(height * scale)))
    return mx.image.imresize(image, new_w, new_h, interp=2)  # MXNet passes 2 to OpenCV: INTER_CUBIC


def to_input(image: Any, spec: Any, max_size: int = MAX_SIZE) -> Any:
    """The ``(1, 3, h, w)`` network input of an HWC ``uint8`` image for the detector ``spec``."""
    from gluon_hub.compat import mx

    resized = resize_short_within(image, spec.input.shape[-1], max_size)
    tensor = mx.nd.image.normalize(mx.nd.image.to_tensor(resized), mean=spec.input.mean, std=spec.input.std)
    return tensor.expand_dims(0)


def _rows(net: Any, x: Any, classes: Sequence[str], threshold: float, width: int, height: int) -> list[Detection]:
    """The network's detections above ``threshold``, best first, in original image pixels."""
    import numpy as np

    ids, scores, boxes = (out.asnumpy().reshape(-1, size) for out, size in zip(net(x), (1, 1, 4)))
    ids, scores = ids[:, 0], scores[:, 0]
    keep = (ids >= 0) & (scores >= threshold)
    boxes = boxes[keep] * np.array([width / x.shape[3], height / x.shape[2]] * 2)
    boxes = np.clip(boxes, 0, [width, height, width, height])
    order = np.argsort(-scores[keep], kind="stable")
    return [Detection(classes[int(i)], float(s), tuple(float(v) for v in b))
            for i, s, b in zip(ids[keep][order], scores[keep][order], boxes[order])]


def detect(net: Any, spec: Any, images: Sequence[str], threshold: float = 0.5,
           ctx: Any = None) -> list[tuple[Any, list[Detection]]]:
    """``(decoded image, detections)`` for each image file, one forward pass per image."""
    return each_image(net, spec, images, threshold, ctx, _rows)


def each_image(net: Any, spec: Any, images: Sequence[str], threshold: float, ctx: Any,
               decode: Callable[..., list], max_size: int = MAX_SIZE) -> list[tuple[Any, list]]:
    """``(decoded image, decode(net, x, classes, threshold, width, height))`` for each image file.

    Images go one at a time because each keeps its own aspect ratio (GluonCV's demos do the same).
    """
    from gluon_hub.compat import mx

    from ..common.images import read_image

    if not 0 <= threshold <= 1:
        raise ValueError(f"--threshold must be between 0 and 1, got {threshold}")
    ctx = ctx or mx.cpu()
    classes = list(net.classes)
    results = []
    for path in images:
        image = read_image(path)
        if image.ndim != 3 or image.shape[2] != 3:
            raise ValueError(f"image {path!r} has shape {image.shape}; expected height x width x 3")
        x = to_input(image, spec, max_size).as_in_context(ctx)
        results.append((image, decode(net, x, classes, threshold, image.shape[1], image.shape[0])))
    return results


def class_colour(index: int) -> tuple[int, int, int]:
    """A saturated colour per class index; neighbouring classes get distant hues."""
    hue = (index * 0.618033988749895) % 1.0  # golden-ratio steps spread hues evenly
    return tuple(int(round(255 * c)) for c in colorsys.hsv_to_rgb(hue, 0.9, 0.95))  # type: ignore[return-value]


def draw_detections(image: Any, detections: Sequence[Detection], classes: Sequence[str], out: str) -> None:
    """Write ``image`` (HWC ``uint8``) to ``out`` with each box, class name and score drawn on it."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:
        raise ImportError("--out draws with Pillow, which is not installed: pip install Pillow") from None
    picture = Image.fromarray(image.asnumpy() if hasattr(image, "asnumpy") else image)
    canvas = ImageDraw.Draw(picture)
    font = ImageFont.load_default()
    line = max(2, round(min(picture.size) / 250))
    index = {name: i for i, name in enumerate(classes)}
    for det in reversed(detections):  # the best box ends up on top
        colour = class_colour(index.get(det.label, 0))
        x1, y1, x2, y2 = det.box
        canvas.rectangle((x1, y1, x2, y2), outline=colour, width=line)
        caption = f"{det.label} {det.score:.2f}"
        left, top, right, bottom = canvas.textbbox((x1, y1), caption, font=font)
        lift = min(bottom - top + 2, y1)  # above the box, or inside it at the image's top edge
        canvas.rectangle((left, top - lift, right + 2, bottom - lift), fill=colour)
        canvas.text((x1 + 1, y1 - lift), caption, fill=(0, 0, 0), font=font)
    directory = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"cannot write {out!r}: the folder {directory!r} does not exist")
    try:
        picture.save(out)
    except ValueError as exc:  # Pillow's "unknown file extension"
        raise ValueError(f"cannot write {out!r}: {exc}; use a .png or .jpg name") from None


def run(args: argparse.Namespace, spec: Any) -> int:
    """``gluon-hub predict`` with a detector: one JSON object of boxes per image and, with
    ``--out``, the picture of them."""
    from ..common.prediction import check_images, onnx_runner, print_each_image, print_found, start

    if args.runtime == "onnx":
        runner = onnx_runner(args, spec)
        check_images(args, "a detector")
        found = runner.detect(args.images, args.threshold)
        return print_found(args, found, "detections", lambda image, items: runner.draw(image, items, args.out))
    pretrained, ctx = start(args, spec)
    return print_each_image(args, spec, pretrained, ctx, detect, draw_detections, "detections", "a detector")
