"""``gluon-hub predict`` for top-down pose estimators: find the persons, then their keypoints.

The pipeline is GluonCV's pose demos': a COCO detector from the registry (``--detector``,
default :data:`DEFAULT_DETECTOR`, reset to its ``person`` class as the demos do) finds the
persons scoring at least ``--threshold``; each box is grown 1.25 times about its centre and
clipped to the image, cut out at whole pixels and resized to the pose network's input (OpenCV's
bicubic, which GluonCV's ``interp=2`` is), normalised, and the heatmaps' peaks are mapped back through the box
(``detector_to_simple_pose`` then ``heatmap_to_coord``, :mod:`.decode`). One
difference: GluonCV's demos crop from the detector's resized input and report coordinates in
it; here the detector's boxes are mapped back to the original image first, so crops keep the
photograph's resolution and keypoints are in its pixels.

``--box X0 Y0 X1 Y1`` names one person's box (image pixels, score 1) instead of running a
detector. Weights follow ``predict``'s rule for both networks: nothing downloads unless asked
(``--pretrained``); ``--random-weights`` runs both untrained.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .keypoints import COCO_KEYPOINTS, COCO_SKELETON

__all__ = ["DEFAULT_DETECTOR", "Person", "crop_persons", "crop_windows", "decode_persons", "estimate_poses",
           "draw_poses", "run"]

#: the person detector GluonCV's pose demos use: small, and fast on a CPU
DEFAULT_DETECTOR = "yolo3_mobilenet1.0_coco"
#: joints less confident than this are not drawn (GluonCV's ``plot_keypoints`` default)
DRAW_THRESHOLD = 0.2
#: how much a detected box grows before cropping (GluonCV's ``detector_to_simple_pose``)
BOX_SCALE = 1.25


@dataclass(frozen=True)
class Person:
    """One person: detector score, the grown crop box ``(x0, y0, x1, y1)`` and ``(17, 3)``
    keypoints ``x, y, confidence`` in image pixels (COCO order)."""

    score: float
    box: tuple[float, float, float, float]
    keypoints: np.ndarray

    def as_json(self) -> dict[str, Any]:
        return {"score": self.score, "box": list(self.box),
                "keypoints": [{"name": name, "x": float(x), "y": float(y), "score": float(c)}
                              for name, (x, y, c) in zip(COCO_KEYPOINTS, self.keypoints)]}


def crop_windows(boxes: Any, image_shape: tuple[int, ...]) -> tuple[np.ndarray, list[tuple[int, int, int, int]]]:
    """``(grown boxes, windows)``: each box grown :data:`BOX_SCALE` times (clipped to the image of
    ``image_shape`` ``(height, width, ...)``) and the whole pixels ``(left, top, right, bottom)``
    cut from it. Both runtimes crop through this, so their crops cover the same pixels."""
    from .decode import upscale_boxes

    grown = upscale_boxes(boxes, image_shape, BOX_SCALE)
    windows = []
    for x0, y0, x1, y1 in grown:
        left, top = max(int(x0), 0), max(int(y0), 0)
        right, bottom = min(int(x1), image_shape[1]), min(int(y1), image_shape[0])
        if right <= left or bottom <= top:
            raise ValueError(f"person box {[x0, y0, x1, y1]} covers no whole pixel of the "
                             f"{image_shape[1]}x{image_shape[0]} image")
        windows.append((left, top, right, bottom))
    return grown, windows


def crop_persons(image: Any, boxes: Any, size: Sequence[int], mean: Sequence[float],
                 std: Sequence[float]) -> tuple[Any, np.ndarray]:
    """``(crops, grown boxes)``: each box grown :data:`BOX_SCALE` times (clipped to the image),
    cut at whole pixels and resized to ``size`` ``(height, width)``, as a normalised
    ``(N, 3, height, width)`` batch; the grown float boxes map heatmaps back."""
    from gluon_hub.compat import mx

    grown, windows = crop_windows(boxes, image.shape)
    height, width = int(size[0]), int(size[1])
    crops = []
    for left, top, right, bottom in windows:
        # interp 2: OpenCV's bicubic (MXNet passes it on as is), GluonCV's fixed_crop default
        crop = mx.image.fixed_crop(image, left, top, right - left, bottom - top, (width, height), interp=2)
        crops.append(mx.nd.image.normalize(mx.nd.image.to_tensor(crop), mean=tuple(mean), std=tuple(std)))
    if not crops:
        return mx.nd.zeros((0, 3, height, width)), grown
    return mx.nd.stack(*crops), grown


def decode_persons(heatmaps: np.ndarray, grown: np.ndarray, scores: Sequence[float]) -> list[Person]:
    """The persons of ``heatmaps`` ``(N, 17, h, w)`` computed from the crops of the ``grown``
    boxes: GluonCV's demo decoding (:func:`.decode.heatmap_to_coord`), shared by both runtimes."""
    from .decode import heatmap_to_coord

    coords, confidence = heatmap_to_coord(heatmaps, grown)
    return [Person(float(s), tuple(float(v) for v in box), np.concatenate([xy, c], axis=1))  # type: ignore[arg-type]
            for s, box, xy, c in zip(scores, grown, coords, confidence)]


def estimate_poses(net: Any, spec: Any, image: Any, boxes: Any, scores: Sequence[float],
                   ctx: Any = None) -> list[Person]:
    """The keypoints of the persons at ``boxes`` (``(x0, y0, x1, y1)`` in ``image`` pixels) with
    the pose network ``net`` of ``spec``."""
    from gluon_hub.compat import mx

    if not len(boxes):
        return []
    crops, grown = crop_persons(image, boxes, spec.input.shape[1:], spec.input.mean, spec.input.std)
    return decode_persons(net(crops.as_in_context(ctx or mx.cpu())).asnumpy(), grown, scores)


def _detector(args: argparse.Namespace, ctx: Any) -> tuple[Any, Any]:
    """The registry detector, reset to its person class, with weights by ``predict``'s rule."""
    import gluon_hub

    from ..common.prediction import network

    spec = gluon_hub.info(args.detector or DEFAULT_DETECTOR)
    if spec.task != "object-detection":
        raise ValueError(f"--detector {spec.name!r} is a {spec.task} model; give an object detector "
                         f"trained on COCO (which has a person class), e.g. {DEFAULT_DETECTOR}")
    try:
        net = network(spec, not args.random_weights, args.detector_params, ctx, {},
                      download=args.pretrained is not None)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"the person detector {spec.name!r} has no weights here (its published ones are not in the cache "
            "or on a local mirror, and predict downloads only when asked): pass --pretrained to download them, "
            "--detector-params FILE for weights of your own, --detector MODEL for a COCO detector you have, --box X0 Y0 X1 Y1 to give the person's box "
            "yourself, or --random-weights to try the untrained networks") from None
    classes = list(net.classes)
    if "person" not in classes:
        raise ValueError(f"--detector {spec.name!r} has no 'person' class ({', '.join(classes[:5])}, ...); "
                         f"use a COCO detector, e.g. {DEFAULT_DETECTOR}")
    if len(classes) > 1:  # as GluonCV's demos: only persons compete for the detector's output slots
        if args.random_weights:  # reset_class copies parameters, so deferred ones must exist first
            from gluon_hub.compat import mx

            net(mx.nd.zeros((1, *spec.input.shape), ctx=ctx))
        net.reset_class(["person"], reuse_weights=["person"])
    net.hybridize()
    return net, spec


def _colour(limb: tuple[int, int]) -> tuple[int, int, int]:
    """Left limbs blue, right limbs orange, the rest green (odd COCO indices are left joints)."""
    sides = {i % 2 for i in limb if i > 0}
    return (40, 120, 255) if sides == {1} else (255, 140, 0) if sides == {0} else (40, 200, 80)


def draw_poses(image: Any, persons: Sequence[Person], out: str, threshold: float = DRAW_THRESHOLD) -> None:
    """Write ``image`` (HWC ``uint8``) to ``out`` with each person's box, limbs (COCO's skeleton)
    and joints drawn where both ends are at least ``threshold`` confident."""
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        raise ImportError("--out draws with Pillow, which is not installed: pip install Pillow") from None
    picture = Image.fromarray(image.asnumpy() if hasattr(image, "asnumpy") else np.asarray(image))
    canvas = ImageDraw.Draw(picture)
    line = max(2, round(min(picture.size) / 150))
    for person in persons:
        canvas.rectangle(person.box, outline=(255, 255, 255), width=max(1, line // 2))
        points = person.keypoints
        for limb in COCO_SKELETON:
            a, b = points[limb[0]], points[limb[1]]
            if a[2] >= threshold and b[2] >= threshold:
                canvas.line((a[0], a[1], b[0], b[1]), fill=_colour(limb), width=line)
        for x, y, confidence in points:
            if confidence >= threshold:
                canvas.ellipse((x - line, y - line, x + line, y + line), fill=(255, 0, 0))
    directory = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"cannot write {out!r}: the folder {directory!r} does not exist")
    try:
        picture.save(out)
    except ValueError as exc:  # Pillow's "unknown file extension"
        raise ValueError(f"cannot write {out!r}: {exc}; use a .png or .jpg name") from None


def _print(path: str, image: Any, persons: Sequence[Person], source: str, as_json: bool) -> None:
    """One image's persons; ``source`` says where their boxes came from (a detector's name or ``--box``)."""
    if as_json:
        print(json.dumps({"image": path, "width": image.shape[1], "height": image.shape[0], "persons_from": source,
                          "persons": [p.as_json() for p in persons]}))
        return
    print(f"{path}: {len(persons)} person(s) from {source}")
    width = max(len(name) for name in COCO_KEYPOINTS)
    for number, person in enumerate(persons, 1):
        print(f"  person {number}: score {person.score:.3f}, box " + " ".join(f"{v:.1f}" for v in person.box))
        for name, (x, y, confidence) in zip(COCO_KEYPOINTS, person.keypoints):
            print(f"    {name:<{width}}  {x:8.1f} {y:8.1f}  {confidence:.3f}")


def _check(args: argparse.Namespace) -> None:
    """The options' checks, before any network is built (which takes a while)."""
    if args.out and len(args.images) != 1:
        raise ValueError(f"--out draws one image, but {len(args.images)} were given; pass a single IMAGE")
    if args.classes:
        raise ValueError("--classes is for classifiers; a pose estimator's --params file must have its 17 keypoints")
    for path in args.images:
        if not os.path.isfile(path):
            raise FileNotFoundError(f"image {path!r} does not exist")
    box = args.box
    if box is not None:
        if args.detector or args.detector_params or args.detector_file:
            raise ValueError("--box gives the person's box and --detector finds persons: pass one of them")
        if not (box[2] > box[0] and box[3] > box[1]):
            raise ValueError(f"--box X0 Y0 X1 Y1 needs X1 > X0 and Y1 > Y0, got {' '.join(f'{v:g}' for v in box)}")


def _onnx_detector(args: argparse.Namespace) -> Any:
    """``--runtime onnx``'s person detector: the runner of ``--detector`` on ``--detector-file``,
    else on its converted file in the cache."""
    import gluon_hub

    from ..common.prediction import load_runner

    spec = gluon_hub.info(args.detector or DEFAULT_DETECTOR)
    if spec.task != "object-detection" or not spec.runner:
        lacks = "" if spec.runner else " without an ONNX runner"
        raise ValueError(f"--detector {spec.name!r} is a {spec.task} model{lacks}; give an object detector "
                         f"trained on COCO (which has a person class), e.g. {DEFAULT_DETECTOR}")
    detector = load_runner(spec.qualified_name, args.detector_file, "--detector-file", "DETECTOR")
    if "person" not in detector.classes:
        raise ValueError(f"--detector {spec.name!r} has no 'person' class ({', '.join(detector.classes[:5])}, ...); "
                         f"use a COCO detector, e.g. {DEFAULT_DETECTOR}")
    return detector


def run(args: argparse.Namespace, spec: Any) -> int:
    """``gluon-hub predict`` with a pose estimator: each image's persons and their 17 keypoints
    (text, or one JSON object per image with ``--json``); ``--out`` draws the skeletons.
    ``--box X0 Y0 X1 Y1`` gives the one person's box in every image instead of a detector.
    ``--runtime onnx`` runs the exported pose network and detector (:mod:`.onnx_runner`)."""
    from ..common.prediction import network, onnx_runner, start

    if args.runtime == "onnx":
        if args.detector_params:
            raise ValueError("--detector-params loads the detector's MXNet weights; with --runtime onnx give "
                             "its exported file: --detector-file FILE.onnx")
        _check(args)
        runner = onnx_runner(args, spec)  # refuses the MXNet-only options
        if args.box is not None:
            found = runner.predict(args.images, box=args.box)
        else:
            detector = _onnx_detector(args)
            found = runner.predict(args.images, detector, args.threshold)
        source = "--box" if args.box is not None else detector.spec.name
        for path, (image, persons) in zip(args.images, found):
            _print(path, image, persons, source, args.json)
            if args.out:
                runner.draw(image, persons, args.out)
        sys.stdout.flush()
        return 0
    if args.detector_file:
        raise ValueError("--detector-file is the detector's exported file that --runtime onnx runs; add "
                         "--runtime onnx, or give the detector's MXNet weights with --detector-params FILE")
    from ..common.images import read_image  # MXNet's decoder
    from ..detection.predict import Detection, detect

    pretrained, ctx = start(args, spec)
    _check(args)
    box = args.box
    if box is not None:
        found = [(read_image(path), [Detection("person", 1.0, tuple(box))]) for path in args.images]
        source = "--box"
    else:
        detector, detector_spec = _detector(args, ctx)
        found = detect(detector, detector_spec, args.images, args.threshold, ctx)
        source = detector_spec.name
    net = network(spec, pretrained, args.params, ctx, {}, download=args.pretrained is not None)
    net.hybridize()  # the number of persons varies: no static_shape
    for path, (image, detections) in zip(args.images, found):
        people = [d for d in detections if d.label == "person"]
        persons = estimate_poses(net, spec, image, [d.box for d in people], [d.score for d in people], ctx)
        _print(path, image, persons, source, args.json)
        if args.out:
            draw_poses(image, persons, args.out)
    sys.stdout.flush()
    return 0
