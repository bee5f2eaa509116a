"""Detection preprocessing presets for SSD, YOLOv3, Faster R-CNN and CenterNet.

A preset is called as ``preset(image, label)`` with an ``HWC`` ``uint8`` ``NDArray`` and a
``(N, 5+)`` label ``[xmin, ymin, xmax, ymax, class_id, ...]`` (what the detection datasets
give) and returns the network's ``CHW`` ``float32`` tensor with the boxes moved along.

The validation presets give exactly the arrays of GluonCV 0.10's
``{SSD,YOLO3,FasterRCNN,CenterNet}DefaultValTransform`` (checked element for element in
``tests/detection/test_detection_presets.py``): the same MXNet/OpenCV resizing with the
same interpolation choice, the same float order for the box arithmetic. They are written
here because GluonCV is only a test reference; unlike GluonCV they never modify the label
they are given.

The training presets apply the same augmentations as GluonCV's default train transforms
(photometric distortion, random expansion on a mean-coloured canvas, SSD's IoU-constrained
random crop, random interpolation, horizontal flip; short-side resizing for Faster R-CNN;
random centre-and-scale affine crops for CenterNet) but draw every random number from one
``numpy.random.RandomState`` per preset, so a ``seed`` makes a run repeatable. They return
``(image, boxes)``; training targets are the model's target generators' job.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from gluon_hub.compat import mx

from ..common.worker_random import WorkerRandom

__all__ = [
    "CenterNetTrainTransform",
    "CenterNetValTransform",
    "FasterRCNNTrainTransform",
    "FasterRCNNValTransform",
    "SSDTrainTransform",
    "SSDValTransform",
    "YOLO3TrainTransform",
    "YOLO3ValTransform",
    "centernet_inverse_affine",
    "crop_boxes",
    "flip_boxes",
    "random_color_distort",
    "random_crop_with_constraints",
    "random_expand",
    "resize_boxes",
    "short_side_size",
    "translate_boxes",
]

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)

# ---------------------------------------------------------------- boxes (numpy, (N, 4+))


def _checked(label: Any) -> np.ndarray:
    boxes = np.asarray(label.asnumpy() if hasattr(label, "asnumpy") else label)
    if boxes.ndim != 2 or boxes.shape[1] < 4:
        raise ValueError(f"a detection label is an (N, 5+) array of [xmin, ymin, xmax, ymax, class, ...] rows; "
                         f"got shape {boxes.shape}")
    return boxes


def resize_boxes(boxes: np.ndarray, in_size: tuple[int, int], out_size: tuple[int, int]) -> np.ndarray:
    """Boxes of an image of ``in_size`` ``(w, h)`` scaled to one of ``out_size``."""
    out = _checked(boxes).astype(float)  # a copy, in float64 as GluonCV computes it
    out[:, (0, 2)] *= out_size[0] / in_size[0]
    out[:, (1, 3)] *= out_size[1] / in_size[1]
    return out


def flip_boxes(boxes: np.ndarray, size: tuple[int, int], flip_x: bool = False) -> np.ndarray:
    """Boxes of an image of ``size`` ``(w, h)`` mirrored left-right when ``flip_x``."""
    out = _checked(boxes).copy()
    if flip_x:
        out[:, (0, 2)] = size[0] - out[:, (2, 0)]
    return out


def translate_boxes(boxes: np.ndarray, x_offset: float = 0, y_offset: float = 0) -> np.ndarray:
    """Boxes shifted by ``(x_offset, y_offset)`` pixels."""
    out = _checked(boxes).copy()
    out[:, (0, 2)] += x_offset
    out[:, (1, 3)] += y_offset
    return out


def crop_boxes(boxes: np.ndarray, crop: tuple[int, int, int, int], center_inside: bool = True) -> np.ndarray:
    """Boxes in the frame of the crop ``(left, top, width, height)``, clipped to it.

    Boxes left without area are dropped, and with ``center_inside`` also those whose
    centre falls outside the crop (SSD's rule for keeping an object).
    """
    out = _checked(boxes).copy()
    left, top, width, height = crop
    low, high = np.array([left, top], float), np.array([left + width, top + height], float)
    keep = np.ones(len(out), bool)
    if center_inside:
        centers = (out[:, :2] + out[:, 2:4]) / 2
        keep = ((low <= centers) & (centers < high)).all(axis=1)
    out[:, :2] = np.maximum(out[:, :2], low) - low
    out[:, 2:4] = np.minimum(out[:, 2:4], high) - low
    keep &= (out[:, :2] < out[:, 2:4]).all(axis=1)
    return out[keep]


def _iou(boxes: np.ndarray, region: np.ndarray) -> np.ndarray:
    """IoU of each box with one region (continuous corners, no +1)."""
    low = np.maximum(boxes[:, :2], region[:2])
    high = np.minimum(boxes[:, 2:4], region[2:])
    inter = np.prod(high - low, axis=1) * (low < high).all(axis=1)
    areas = np.prod(boxes[:, 2:4] - boxes[:, :2], axis=1)
    return inter / (areas + np.prod(region[2:] - region[:2]) - inter)


# ---------------------------------------------------------------- images


def _auto_interp(interp: int, old_hw: tuple[int, int], new_hw: tuple[int, int]) -> int:
    """OpenCV's method for MXNet's ``interp=9``: cubic to enlarge, area to shrink, else bilinear."""
    if interp != 9:
        return interp
    if new_hw[0] > old_hw[0] and new_hw[1] > old_hw[1]:
        return 2
    if new_hw[0] < old_hw[0] and new_hw[1] < old_hw[1]:
        return 3
    return 1


def _resize(image: Any, width: int, height: int, interp: int) -> Any:
    method = _auto_interp(interp, image.shape[:2], (height, width))
    return mx.image.imresize(image, width, height, interp=method)


def short_side_size(height: int, width: int, short: int, max_size: int, multiple: int = 1) -> tuple[int, int]:
    """``(new_w, new_h)`` with the shorter side ``short``, the longer at most ``max_size``,
    both rounded to a ``multiple`` (the Faster R-CNN and YOLO test-time rule)."""
    small, large = (height, width) if width > height else (width, height)
    scale = float(short) / float(small)
    if np.round(scale * large / multiple) * multiple > max_size:
        scale = float(np.floor(max_size / multiple) * multiple) / float(large)
    return int(np.round(width * scale / multiple) * multiple), int(np.round(height * scale / multiple) * multiple)


def _image(src: Any) -> Any:
    """``src`` as an ``NDArray`` (numpy images are accepted) once its shape is checked."""
    shape = tuple(src.shape) if hasattr(src, "shape") else np.shape(src)
    if len(shape) != 3 or shape[2] != 3:
        raise ValueError(f"a detection preset takes an HWC image with 3 channels, got shape {shape}")
    if shape[0] == 0 or shape[1] == 0:
        raise ValueError(f"the image is empty (shape {shape})")
    return src if isinstance(src, mx.nd.NDArray) else mx.nd.array(np.asarray(src), dtype=np.uint8)


def _tensor(image: Any, mean: Sequence[float], std: Sequence[float]) -> Any:
    return mx.nd.image.normalize(mx.nd.image.to_tensor(image), mean=tuple(mean), std=tuple(std))


def random_color_distort(image: Any, rng: np.random.RandomState, brightness: float = 32,
                         contrast: tuple[float, float] = (0.5, 1.5), saturation: tuple[float, float] = (0.5, 1.5),
                         hue: float = 18) -> Any:
    """SSD's photometric distortion of an ``HWC`` image, as ``float32``.

    Each of brightness shift, contrast, saturation and hue rotation (in YIQ space)
    happens with probability 1/2; contrast comes first or last at random.
    """
    img = image.astype("float32").asnumpy() if hasattr(image, "asnumpy") else np.asarray(image, np.float32)

    def apply_contrast(x: np.ndarray) -> np.ndarray:
        return x * np.float32(rng.uniform(*contrast)) if rng.uniform() > 0.5 else x

    def apply_saturation(x: np.ndarray) -> np.ndarray:
        if rng.uniform() <= 0.5:
            return x
        alpha = np.float32(rng.uniform(*saturation))
        gray = (x * np.array([0.299, 0.587, 0.114], np.float32)).sum(axis=2, keepdims=True)
        return x * alpha + gray * (1 - alpha)

    def apply_hue(x: np.ndarray) -> np.ndarray:
        if rng.uniform() <= 0.5:
            return x
        angle = rng.uniform(-hue, hue) * np.pi
        rotate = np.array([[1.0, 0.0, 0.0], [0.0, np.cos(angle), -np.sin(angle)], [0.0, np.sin(angle), np.cos(angle)]])
        to_yiq = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])
        from_yiq = np.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.107, 1.705]])
        return x @ (from_yiq @ rotate @ to_yiq).T.astype(np.float32)

    if rng.uniform() > 0.5:
        img = img + np.float32(rng.uniform(-brightness, brightness))
    if rng.randint(0, 2):
        img = apply_hue(apply_saturation(apply_contrast(img)))
    else:
        img = apply_contrast(apply_hue(apply_saturation(img)))
    return mx.nd.array(img, dtype=np.float32)


def random_expand(image: Any, rng: np.random.RandomState, max_ratio: float = 4,
                  fill: Sequence[float] | float = 0) -> tuple[Any, tuple[int, int, int, int]]:
    """The image placed at random on a canvas up to ``max_ratio`` times larger, filled with ``fill``.

    Returns the canvas and ``(x_offset, y_offset, canvas_w, canvas_h)``.
    """
    height, width, channels = image.shape
    if max_ratio <= 1:
        return image, (0, 0, width, height)
    ratio = rng.uniform(1, max_ratio)
    out_h, out_w = int(height * ratio), int(width * ratio)
    top, left = rng.randint(0, out_h - height + 1), rng.randint(0, out_w - width + 1)
    colour = np.broadcast_to(np.asarray(fill, np.float64), (channels,))
    canvas = mx.nd.array(np.tile(colour, (out_h, out_w, 1)), dtype=image.dtype)
    canvas[top:top + height, left:left + width, :] = image
    return canvas, (left, top, out_w, out_h)


_SSD_CONSTRAINTS: tuple[tuple[float | None, float | None], ...] = (
    (0.1, None), (0.3, None), (0.5, None), (0.7, None), (0.9, None), (None, 1),
)


def random_crop_with_constraints(
    boxes: np.ndarray, size: tuple[int, int], rng: np.random.RandomState, min_scale: float = 0.3,
    max_scale: float = 1, max_aspect_ratio: float = 2,
    constraints: Sequence[tuple[float | None, float | None]] = _SSD_CONSTRAINTS, max_trial: int = 50,
) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """SSD's crop sampling: per IoU constraint, up to ``max_trial`` random crops until one has
    every box's IoU in the range; one of the found crops (or the whole image) is taken at
    random, keeping the boxes whose centres it contains.

    Returns the boxes in the crop's frame and the crop ``(left, top, width, height)``.
    """
    boxes = _checked(boxes)
    width, height = size
    candidates = [(0, 0, width, height)]
    for low, high in constraints:
        low = -np.inf if low is None else low
        high = np.inf if high is None else high
        for _ in range(max_trial):
            scale = rng.uniform(min_scale, max_scale)
            ratio = rng.uniform(max(1 / max_aspect_ratio, scale * scale), min(max_aspect_ratio, 1 / (scale * scale)))
            crop_h, crop_w = int(height * scale / np.sqrt(ratio)), int(width * scale * np.sqrt(ratio))
            if crop_h < 1 or crop_w < 1:
                continue
            top, left = rng.randint(0, height - crop_h + 1), rng.randint(0, width - crop_w + 1)
            if len(boxes) == 0:
                return boxes, (left, top, crop_w, crop_h)
            iou = _iou(boxes.astype(float), np.array([left, top, left + crop_w, top + crop_h], float))
            if low <= iou.min() and iou.max() <= high:
                candidates.append((left, top, crop_w, crop_h))
                break
    while candidates:
        crop = candidates.pop(rng.randint(0, len(candidates)))
        kept = crop_boxes(boxes, crop, center_inside=True)
        if len(kept):
            return kept, crop
    return boxes, (0, 0, width, height)


def _random_flip(image: Any, boxes: np.ndarray, rng: np.random.RandomState, p: float = 0.5) -> tuple[Any, np.ndarray]:
    flip = rng.uniform() < p
    if flip:
        image = mx.nd.flip(image, axis=1)
    return image, flip_boxes(boxes, (image.shape[1], image.shape[0]), flip_x=flip)


# ---------------------------------------------------------------- validation presets


class _FixedSizeVal:
    def __init__(self, width: int, height: int, mean: Sequence[float] = MEAN, std: Sequence[float] = STD) -> None:
        if width < 1 or height < 1:
            raise ValueError(f"width and height must be positive, got {width}x{height}")
        self._width, self._height, self._mean, self._std = width, height, tuple(mean), tuple(std)

    def __call__(self, src: Any, label: Any) -> tuple[Any, np.ndarray]:
        src = _image(src)
        height, width = src.shape[:2]
        image = _resize(src, self._width, self._height, interp=9)
        boxes = resize_boxes(label, (width, height), (self._width, self._height))
        return _tensor(image, self._mean, self._std), boxes.astype(np.float32)


class SSDValTransform(_FixedSizeVal):
    """SSD evaluation: resize to ``width`` x ``height`` (area when shrinking, cubic when
    enlarging, else bilinear), normalise; boxes scaled along.

    Examples
    --------
    >>> from gluon_hub.compat import mx
    >>> image, boxes = SSDValTransform(300, 300)(mx.nd.zeros((40, 60, 3), dtype="uint8"), [[0, 0, 30, 20, 1]])
    >>> image.shape, boxes.tolist()
    ((3, 300, 300), [[0.0, 0.0, 150.0, 150.0, 1.0]])
    """


class YOLO3ValTransform(_FixedSizeVal):
    """YOLOv3 evaluation: the same fixed-size resize and normalisation as SSD's."""


class FasterRCNNValTransform:
    """Faster R-CNN evaluation: shorter side to ``short`` (longer at most ``max_size``),
    bilinear; returns the tensor, the scaled boxes and ``[original h / new h]``."""

    def __init__(self, short: int = 600, max_size: int = 1000, mean: Sequence[float] = MEAN,
                 std: Sequence[float] = STD) -> None:
        self._short, self._max_size, self._mean, self._std = short, max_size, tuple(mean), tuple(std)

    def __call__(self, src: Any, label: Any) -> tuple[Any, np.ndarray, Any]:
        src = _image(src)
        height, width = src.shape[:2]
        new_w, new_h = short_side_size(height, width, self._short, self._max_size)
        image = _resize(src, new_w, new_h, interp=1)
        boxes = resize_boxes(label, (width, height), (new_w, new_h))
        return _tensor(image, self._mean, self._std), boxes.astype(np.float32), mx.nd.array([height / float(new_h)])


def _cv2() -> Any:
    try:
        import cv2
    except ImportError:
        raise ImportError("the CenterNet presets warp images with OpenCV, which is not installed: "
                          "pip install opencv-python (the plugin's [opencv] extra)") from None
    return cv2


def _center_affine(center: np.ndarray, side: float, out_w: int, out_h: int, inverse: bool = False) -> np.ndarray:
    """The 2x3 map of a ``side``-square around ``center`` onto an ``out_w`` x ``out_h`` frame,
    solved from three point pairs in float32 as CenterNet's reference code does (so the
    matrix, and OpenCV's fixed-point warp of it, agree to the bit)."""
    cx, cy = np.float32(center[0]), np.float32(center[1])
    half = np.float32(side * 0.5)
    src = np.array([[cx, cy], [cx, cy - half], [cx - half, cy - half]], np.float32)
    dst_half_w = np.float32(out_w * 0.5)
    mid = np.array([out_w * 0.5, out_h * 0.5], np.float32)
    dst = np.array([mid, mid + np.array([0, -dst_half_w], np.float32),
                    mid + np.array([-dst_half_w, -dst_half_w], np.float32)], np.float32)
    return _cv2().getAffineTransform(dst, src) if inverse else _cv2().getAffineTransform(src, dst)


def centernet_inverse_affine(orig_w: int, orig_h: int, out_w: int, out_h: int) -> np.ndarray:
    """The 2x3 map from CenterNet's ``out_w`` x ``out_h`` frame back to the original image,
    for ``COCODetectionMetric(post_affine=...)``."""
    center = np.array([orig_w / 2.0, orig_h / 2.0], np.float32)
    return _center_affine(center, max(orig_w, orig_h) * 1.0, out_w, out_h, inverse=True)


def _affine_boxes(boxes: np.ndarray, matrix: np.ndarray, out_w: int, out_h: int, by_corner: bool = False) -> np.ndarray:
    """Corners mapped through ``matrix`` (from float32 points, in float64) and clipped to the frame.

    ``by_corner`` clips as GluonCV's CenterNet presets do, the top-left corner to
    ``out_w - 1`` and the bottom-right to ``out_h - 1`` (the same for square inputs); the
    validation preset keeps that for bit-equality, training clips x to the width and y
    to the height.
    """
    out = boxes.copy()
    for corner in (slice(0, 2), slice(2, 4)):
        points = np.ones((len(out), 3), np.float32)
        points[:, :2] = out[:, corner]
        out[:, corner] = (points[:, None, :].astype(np.float64) * matrix[None]).sum(axis=2)
    if by_corner:
        out[:, :2] = np.clip(out[:, :2], 0, out_w - 1)
        out[:, 2:4] = np.clip(out[:, 2:4], 0, out_h - 1)
    else:
        out[:, (0, 2)] = np.clip(out[:, (0, 2)], 0, out_w - 1)
        out[:, (1, 3)] = np.clip(out[:, (1, 3)], 0, out_h - 1)
    return out


class CenterNetValTransform:
    """CenterNet evaluation: the image's longer side fitted into ``width`` x ``height``
    around its centre by an affine warp (bilinear, black borders), normalised."""

    def __init__(self, width: int, height: int, mean: Sequence[float] = MEAN, std: Sequence[float] = STD) -> None:
        self._width, self._height = width, height
        self._mean = np.array(mean, np.float32).reshape(1, 1, 3)
        self._std = np.array(std, np.float32).reshape(1, 1, 3)

    def __call__(self, src: Any, label: Any) -> tuple[Any, np.ndarray]:
        src = _image(src)
        height, width = src.shape[:2]
        matrix = _center_affine(np.array([width / 2.0, height / 2.0], np.float32), max(height, width) * 1.0,
                                self._width, self._height)
        warped = _cv2().warpAffine(src.asnumpy(), matrix, (self._width, self._height), flags=_cv2().INTER_LINEAR)
        boxes = _affine_boxes(_checked(label), matrix, self._width, self._height, by_corner=True)
        image = warped.astype(np.float32)  # normalised in place: the same float ops, fewer copies
        image /= np.float32(255.0)
        image -= self._mean
        image /= self._std
        return mx.nd.array(image.transpose(2, 0, 1)), boxes.astype(np.float32)


# ---------------------------------------------------------------- training presets


class _Seeded:
    def __init__(self, seed: int | None) -> None:
        self._random = WorkerRandom(seed)

    @property
    def rng(self) -> np.random.RandomState:
        """This process's stream (each data-loader worker draws its own numbers)."""
        return self._random.rng


class SSDTrainTransform(_Seeded):
    """SSD training augmentation: colour distortion, random expansion (half the time, up
    to 4x on a mean-coloured canvas), IoU-constrained random crop, resize to ``width`` x
    ``height`` with a random interpolation, horizontal flip, normalisation.

    Returns ``(image, boxes)``; boxes are ``float32`` in the resized image's pixels.
    """

    def __init__(self, width: int, height: int, mean: Sequence[float] = MEAN, std: Sequence[float] = STD,
                 seed: int | None = None) -> None:
        super().__init__(seed)
        self._width, self._height, self._mean, self._std = width, height, tuple(mean), tuple(std)

    def __call__(self, src: Any, label: Any) -> tuple[Any, np.ndarray]:
        src, boxes = _image(src), _checked(label)
        image = random_color_distort(src, self.rng)
        if self.rng.uniform() > 0.5:
            image, (dx, dy, _, _) = random_expand(image, self.rng, fill=[m * 255 for m in self._mean])
            boxes = translate_boxes(boxes, dx, dy)
        height, width = image.shape[:2]
        boxes, (left, top, crop_w, crop_h) = random_crop_with_constraints(boxes, (width, height), self.rng)
        image = mx.image.fixed_crop(image, left, top, crop_w, crop_h)
        image = mx.image.imresize(image, self._width, self._height, interp=int(self.rng.randint(0, 5)))
        boxes = resize_boxes(boxes, (crop_w, crop_h), (self._width, self._height))
        image, boxes = _random_flip(image, boxes, self.rng)
        return _tensor(image, self._mean, self._std), boxes.astype(np.float32)


class YOLO3TrainTransform(SSDTrainTransform):
    """YOLOv3 training augmentation: GluonCV's recipe is SSD's (distort, expand, constrained
    crop, random-interpolation resize, flip); multi-scale training changes ``width`` and
    ``height`` between batches, outside the transform."""


class FasterRCNNTrainTransform(_Seeded):
    """Faster R-CNN training augmentation: shorter side to ``short`` (or, given a
    ``(low, high)`` range, a random size in it), longer at most ``max_size``, bilinear;
    horizontal flip with probability ``flip_p``; normalisation."""

    def __init__(self, short: int | tuple[int, int] = 600, max_size: int = 1000, mean: Sequence[float] = MEAN,
                 std: Sequence[float] = STD, flip_p: float = 0.5, seed: int | None = None) -> None:
        super().__init__(seed)
        self._short, self._max_size, self._flip_p = short, max_size, flip_p
        self._mean, self._std = tuple(mean), tuple(std)

    def __call__(self, src: Any, label: Any) -> tuple[Any, np.ndarray]:
        src, boxes = _image(src), _checked(label)
        short = self._short
        if not isinstance(short, int):
            short = int(self.rng.randint(short[0], short[1] + 1))
        height, width = src.shape[:2]
        new_w, new_h = short_side_size(height, width, short, self._max_size)
        image = _resize(src, new_w, new_h, interp=1)
        boxes = resize_boxes(boxes, (width, height), (new_w, new_h))
        image, boxes = _random_flip(image, boxes, self.rng, self._flip_p)
        return _tensor(image, self._mean, self._std), boxes.astype(np.float32)


def _border(border: int, size: int) -> int:
    """The largest ``border / 2**k`` that leaves room for a centre inside ``size``."""
    step = 1
    while size - border // step <= border // step:
        step *= 2
    return border // step


class CenterNetTrainTransform(_Seeded):
    """CenterNet training augmentation: horizontal flip, a random centre (away from the
    borders) and scale (x0.6-1.4) cut out by an affine warp to ``width`` x ``height``;
    brightness, contrast and saturation in random order, PCA lighting noise; normalisation.

    Boxes come back in the heatmap's frame, the input divided by ``scale_factor``, as
    CenterNet's target generator takes them.
    """

    _EIGVAL = np.array([0.2141788, 0.01817699, 0.00341571], np.float32)
    _EIGVEC = np.array([[-0.58752847, -0.69563484, 0.41340352], [-0.5832747, 0.00994535, -0.81221408],
                        [-0.56089297, 0.71832671, 0.41158938]], np.float32)

    def __init__(self, width: int, height: int, scale_factor: int = 4, mean: Sequence[float] = MEAN,
                 std: Sequence[float] = STD, seed: int | None = None) -> None:
        super().__init__(seed)
        self._width, self._height, self._scale_factor = width, height, scale_factor
        self._mean = np.array(mean, np.float32).reshape(1, 1, 3)
        self._std = np.array(std, np.float32).reshape(1, 1, 3)

    def __call__(self, src: Any, label: Any) -> tuple[Any, np.ndarray]:
        src, boxes = _image(src), _checked(label)
        image, boxes = _random_flip(src, boxes, self.rng)
        height, width = image.shape[:2]
        w_border, h_border = _border(128, width), _border(128, height)
        center = np.array([self.rng.randint(w_border, width - w_border), self.rng.randint(h_border, height - h_border)],
                          np.float32)
        side = max(height, width) * float(np.clip(self.rng.randn() * 0.4 + 1, 0.6, 1.4))
        cv2 = _cv2()
        matrix = _center_affine(center, side, self._width, self._height)
        warped = cv2.warpAffine(image.asnumpy(), matrix, (self._width, self._height), flags=cv2.INTER_LINEAR)
        out_w, out_h = self._width // self._scale_factor, self._height // self._scale_factor
        boxes = _affine_boxes(boxes.astype(float), _center_affine(center, side, out_w, out_h), out_w, out_h)
        pixels = warped.astype(np.float32) / 255.0
        gray = cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY)[:, :, None]
        for op in self.rng.permutation(3):
            alpha = np.float32(1.0 + self.rng.uniform(-0.4, 0.4))
            if op == 0:  # brightness
                pixels = pixels * alpha
            elif op == 1:  # contrast, towards the mean grey
                pixels = pixels * alpha + gray.mean() * (1 - alpha)
            else:  # saturation, towards each pixel's grey
                pixels = pixels * alpha + gray * (1 - alpha)
        pixels = pixels + (self._EIGVEC @ (self._EIGVAL * self.rng.normal(scale=0.1, size=3))).astype(np.float32)
        pixels = (pixels - self._mean) / self._std
        return mx.nd.array(pixels.transpose(2, 0, 1).astype(np.float32)), boxes.astype(np.float32)
