"""GluonCV's clip transforms for action recognition: the same crop for every frame of a clip.

Presets (GluonCV 0.10's ``gluoncv.data.transforms.video`` and the ``--data-aug`` choices of its
``train_recognizer.py``):

- ``"v1"``: :class:`VideoTrainTransform` (multi-scale corner crop of the frames as decoded, resized
  to ``size``, random flip) and :class:`VideoValTransform` (centre crop);
- ``"v2"``: :class:`VideoTrainTransformV2` (short side to ``short_side`` first) and
  :class:`VideoValTransformV2` (short side, centre crop);
- ``"v3"``: :class:`VideoTrainTransformV3` (random short side in ``[min_size, max_size]``, random
  crop, flip: PySlowFast's), validated with :class:`VideoValTransformV2`;
- testing: :func:`ten_crop` / :func:`three_crop` then :func:`to_tensor`, see :func:`multi_crop_transform`.

Each transform takes the frames of one sample as a ``(N, H, W, 3)`` ``uint8`` array (or a list of
``H x W x 3`` frames) and returns ``(N, 3, h, w)`` ``float32`` scaled to ``[0, 1]`` and normalised.
The random choices are GluonCV's, drawn in the same order from the same kind of stream: with
``seed=None`` from Python's ``random`` module (and numpy's global stream for v3), exactly as GluonCV
draws them; with a seed, from streams of the transform's own that re-seed themselves per
data-loader worker (GluonCV's workers would otherwise all draw the same crops).
"""

from __future__ import annotations

import math
import os
import random
from typing import Any, Sequence

import numpy as np

from ..common.worker_random import WorkerRandom

__all__ = [
    "VideoTrainTransform", "VideoTrainTransformV2", "VideoTrainTransformV3", "VideoValTransform",
    "VideoValTransformV2", "center_crop", "fixed_crop_offsets", "multi_scale_crop_sizes", "resize",
    "multi_crop_transform", "short_side_size", "ten_crop", "three_crop", "to_tensor", "train_transform",
    "val_transform",
]

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
#: GluonCV's default multi-scale crop ratios (``--scale-ratios``)
SCALE_RATIOS = (1.0, 0.875, 0.75, 0.66)
#: OpenCV resizes at most this many channels at once; frames are resized in groups this wide
_MAX_CHANNELS = 510


def _stack(frames: Any) -> np.ndarray:
    """``frames`` as one ``(N, H, W, C)`` array (a list of frames is stacked)."""
    array = frames if isinstance(frames, np.ndarray) else np.stack([np.asarray(f) for f in frames])
    if array.ndim != 4:
        raise ValueError(f"expected frames of shape (N, H, W, C), got {array.shape}")
    return array


def _pair(size: int | Sequence[int]) -> tuple[int, int]:
    """``(height, width)`` from an int or a pair."""
    if isinstance(size, (int, np.integer)):
        return int(size), int(size)
    height, width = size
    return int(height), int(width)


def resize(frames: Any, width: int, height: int) -> np.ndarray:
    """Every frame resized to ``width x height`` with OpenCV's bilinear filter (as GluonCV's
    ``cv2.resize``), several frames per call: OpenCV filters each channel alike, so stacking frames
    along the channels gives the same pixels with far fewer calls."""
    import cv2

    frames = _stack(frames)
    count, in_h, in_w, channels = frames.shape
    if (in_h, in_w) == (height, width):
        return frames
    group = max(1, _MAX_CHANNELS // channels)
    out = np.empty((count, height, width, channels), dtype=frames.dtype)
    for start in range(0, count, group):
        chunk = frames[start:start + group]
        wide = np.ascontiguousarray(chunk.transpose(1, 2, 0, 3)).reshape(in_h, in_w, -1)
        resized = cv2.resize(wide, (width, height)).reshape(height, width, len(chunk), channels)
        out[start:start + group] = resized.transpose(2, 0, 1, 3)
    return out


def to_tensor(frames: Any, mean: Sequence[float] = IMAGENET_MEAN, std: Sequence[float] = IMAGENET_STD,
              max_intensity: float = 255.0) -> np.ndarray:
    """``(N, H, W, C)`` frames -> ``(N, C, H, W)`` ``float32`` of ``(x / max_intensity - mean) / std``."""
    frames = _stack(frames)
    mean_ = np.asarray(mean, dtype=np.float64).reshape(1, -1, 1, 1)
    std_ = np.asarray(std, dtype=np.float64).reshape(1, -1, 1, 1)
    scale = (1.0 / (max_intensity * std_)).astype(np.float32)
    shift = (mean_ / std_).astype(np.float32)
    return frames.transpose(0, 3, 1, 2).astype(np.float32) * scale - shift


def multi_scale_crop_sizes(height: int, width: int, scale_ratios: Sequence[float] = SCALE_RATIOS,
                           max_distort: int = 1) -> list[tuple[int, int]]:
    """Candidate ``(crop height, crop width)``: pairs of ratios of the short side at most
    ``max_distort`` apart in the list (Wang et al., "Towards Good Practices for Very Deep Two-Stream
    ConvNets")."""
    base = min(height, width)
    sides = [int(base * ratio) for ratio in scale_ratios]
    return [(h, w) for i, h in enumerate(sides) for j, w in enumerate(sides) if abs(i - j) <= max_distort]


def fixed_crop_offsets(height: int, width: int, crop_height: int, crop_width: int,
                       more_fix_crop: bool = True) -> list[tuple[int, int]]:
    """Candidate ``(top, left)`` of a crop: the corners and the centre, and with ``more_fix_crop`` the
    edge centres and the quarter points, in GluonCV's order (its random choice indexes this list)."""
    dh, dw = (height - crop_height) // 4, (width - crop_width) // 4
    grid = [(0, 0), (0, 4), (4, 0), (4, 4), (2, 2)]
    if more_fix_crop:
        grid += [(0, 2), (4, 2), (2, 0), (2, 4), (1, 1), (1, 3), (3, 1), (3, 3)]
    return [(i * dh, j * dw) for i, j in grid]


def short_side_size(height: int, width: int, short_side: int) -> tuple[int, int]:
    """``(height, width)`` with the short side ``short_side`` and the aspect ratio kept (rounded down)."""
    if width < height:
        return int(math.floor(height / width * short_side)), short_side
    return short_side, int(math.floor(width / height * short_side))


def center_crop(frames: Any, size: int | Sequence[int]) -> np.ndarray:
    """The centre ``size`` crop of every frame (offsets rounded as GluonCV's ``VideoCenterCrop``)."""
    frames = _stack(frames)
    crop_h, crop_w = _pair(size)
    height, width = frames.shape[1:3]
    top, left = int(round((height - crop_h) / 2.0)), int(round((width - crop_w) / 2.0))
    return frames[:, top:top + crop_h, left:left + crop_w]


def ten_crop(frames: Any, size: int | Sequence[int]) -> np.ndarray:
    """Centre, top-left, bottom-left, top-right, bottom-right crops and their mirror images, for each
    frame in turn (``N x 10`` frames, GluonCV's ``VideoTenCrop`` order)."""
    frames = _stack(frames)
    crop_h, crop_w = _pair(size)
    height, width = frames.shape[1:3]
    if height < crop_h or width < crop_w:
        raise ValueError(f"cannot take {crop_h}x{crop_w} crops from frames of {height}x{width}")
    boxes = [((height - crop_h) // 2, (width - crop_w) // 2), (0, 0), (height - crop_h, 0), (0, width - crop_w),
             (height - crop_h, width - crop_w)]
    crops = np.stack([frames[:, t:t + crop_h, left:left + crop_w] for t, left in boxes], axis=1)  # N, 5, h, w, C
    crops = np.concatenate([crops, crops[:, :, :, ::-1]], axis=1)
    return crops.reshape((-1,) + crops.shape[2:])


def three_crop(frames: Any, size: int | Sequence[int]) -> np.ndarray:
    """Three crops along the long side (start, end, middle), each over all frames (``3 x N`` frames,
    GluonCV's ``VideoThreeCrop``); one side of the frames must already equal the crop's."""
    frames = _stack(frames)
    crop_h, crop_w = _pair(size)
    height, width = frames.shape[1:3]
    if crop_h == height:
        step = (width - crop_w) // 2
        boxes = [(0, 0), (0, 2 * step), (0, step)]
    elif crop_w == width:
        step = (height - crop_h) // 2
        boxes = [(0, 0), (2 * step, 0), (step, 0)]
    else:
        raise ValueError(f"three-crop needs frames with one side equal to the crop's ({crop_h}x{crop_w}), got "
                         f"{height}x{width}: resize the short side first (--new-height)")
    return np.concatenate([frames[:, t:t + crop_h, left:left + crop_w] for t, left in boxes])


class _Streams:
    """Python and numpy random streams: the global ones (GluonCV's) or seeded ones per process."""

    def __init__(self, seed: int | None) -> None:
        self._pid = os.getpid()
        self._py = None if seed is None else random.Random(seed)
        self._np = None if seed is None else WorkerRandom(seed)

    @property
    def py(self) -> Any:
        if self._py is None:
            return random
        if os.getpid() != self._pid:  # a data-loader worker: seed from numpy's stream, which re-seeds per worker
            self._pid = os.getpid()
            self._py = random.Random(int(self.np.randint(2**31)))
        return self._py

    @property
    def np(self) -> Any:
        return np.random if self._np is None else self._np.rng


class VideoValTransform:
    """Centre crop of ``size``, to tensor, normalise (GluonCV's ``VideoGroupValTransform``, "v1")."""

    def __init__(self, size: int | Sequence[int], mean: Sequence[float] = IMAGENET_MEAN,
                 std: Sequence[float] = IMAGENET_STD) -> None:
        self.size, self.mean, self.std = _pair(size), tuple(mean), tuple(std)

    def __call__(self, frames: Any) -> np.ndarray:
        return to_tensor(center_crop(frames, self.size), self.mean, self.std)


class VideoValTransformV2:
    """Short side to ``short_side``, centre crop (offsets rounded up), to tensor, normalise
    (GluonCV's ``VideoGroupValTransformV2``)."""

    def __init__(self, crop_size: int | Sequence[int], short_side: int, mean: Sequence[float] = IMAGENET_MEAN,
                 std: Sequence[float] = IMAGENET_STD) -> None:
        self.size, self.short_side, self.mean, self.std = _pair(crop_size), short_side, tuple(mean), tuple(std)

    def __call__(self, frames: Any) -> np.ndarray:
        frames = _stack(frames)
        new_h, new_w = short_side_size(frames.shape[1], frames.shape[2], self.short_side)
        crop_h, crop_w = self.size
        top, left = int(math.ceil((new_h - crop_h) / 2)), int(math.ceil((new_w - crop_w) / 2))
        frames = resize(frames, new_w, new_h)[:, top:top + crop_h, left:left + crop_w]
        return to_tensor(frames, self.mean, self.std)


class VideoTrainTransform:
    """Multi-scale crop (a size from :func:`multi_scale_crop_sizes`, a place from
    :func:`fixed_crop_offsets` or anywhere), resize to ``size``, flip with probability ``prob``, to
    tensor, normalise (GluonCV's ``VideoGroupTrainTransform``, "v1")."""

    def __init__(self, size: int | Sequence[int], scale_ratios: Sequence[float] = SCALE_RATIOS,
                 mean: Sequence[float] = IMAGENET_MEAN, std: Sequence[float] = IMAGENET_STD, fix_crop: bool = True,
                 more_fix_crop: bool = True, max_distort: int = 1, prob: float = 0.5, seed: int | None = None) -> None:
        self.size, self.scale_ratios = _pair(size), tuple(scale_ratios)
        self.mean, self.std = tuple(mean), tuple(std)
        self.fix_crop, self.more_fix_crop, self.max_distort, self.prob = fix_crop, more_fix_crop, max_distort, prob
        self._streams = _Streams(seed)

    def _crop(self, height: int, width: int) -> tuple[int, int, int, int, bool]:
        """``(top, left, crop height, crop width, flip)``, drawn in GluonCV's order."""
        rng = self._streams.py
        crop_h, crop_w = rng.choice(multi_scale_crop_sizes(height, width, self.scale_ratios, self.max_distort))
        flip = rng.random() < self.prob
        if self.fix_crop:
            top, left = rng.choice(fixed_crop_offsets(height, width, crop_h, crop_w, self.more_fix_crop))
        else:
            top, left = rng.randint(0, height - crop_h), rng.randint(0, width - crop_w)
        return top, left, crop_h, crop_w, flip

    def _scaled(self, frames: np.ndarray) -> np.ndarray:
        """The frames the crop is taken from (v1: as decoded)."""
        return frames

    def __call__(self, frames: Any) -> np.ndarray:
        frames = _stack(frames)
        top, left, crop_h, crop_w, flip = self._crop(*self._size_before_crop(frames))
        frames = self._scaled(frames)[:, top:top + crop_h, left:left + crop_w]
        frames = resize(frames, self.size[1], self.size[0])
        return to_tensor(frames[:, :, ::-1] if flip else frames, self.mean, self.std)

    def _size_before_crop(self, frames: np.ndarray) -> tuple[int, int]:
        return frames.shape[1], frames.shape[2]


class VideoTrainTransformV2(VideoTrainTransform):
    """Short side to ``short_side`` first, then as :class:`VideoTrainTransform` (GluonCV's
    ``VideoGroupTrainTransformV2``, mmaction's recipe)."""

    def __init__(self, size: int | Sequence[int], short_side: int, scale_ratios: Sequence[float] = SCALE_RATIOS,
                 mean: Sequence[float] = IMAGENET_MEAN, std: Sequence[float] = IMAGENET_STD, fix_crop: bool = True,
                 more_fix_crop: bool = True, max_distort: int = 1, prob: float = 0.5, seed: int | None = None) -> None:
        super().__init__(size, scale_ratios, mean, std, fix_crop, more_fix_crop, max_distort, prob, seed)
        self.short_side = short_side

    def _size_before_crop(self, frames: np.ndarray) -> tuple[int, int]:
        return short_side_size(frames.shape[1], frames.shape[2], self.short_side)

    def _scaled(self, frames: np.ndarray) -> np.ndarray:
        new_h, new_w = self._size_before_crop(frames)
        return resize(frames, new_w, new_h)


class VideoTrainTransformV3:
    """Random short side in ``[min_size, max_size]``, random ``crop_size`` crop, flip, to tensor,
    normalise (GluonCV's ``VideoGroupTrainTransformV3``, PySlowFast's recipe). The size and crop are
    drawn from numpy's stream, the flip from Python's, as GluonCV draws them."""

    def __init__(self, crop_size: int | Sequence[int], min_size: int, max_size: int,
                 mean: Sequence[float] = IMAGENET_MEAN, std: Sequence[float] = IMAGENET_STD, prob: float = 0.5,
                 seed: int | None = None) -> None:
        if min_size > max_size:
            raise ValueError(f"min_size ({min_size}) is larger than max_size ({max_size})")
        self.size, self.min_size, self.max_size, self.prob = _pair(crop_size), min_size, max_size, prob
        self.mean, self.std = tuple(mean), tuple(std)
        self._streams = _Streams(seed)

    def __call__(self, frames: Any) -> np.ndarray:
        frames = _stack(frames)
        rng = self._streams.np
        side = int(round(rng.uniform(self.min_size, self.max_size)))
        new_h, new_w = short_side_size(frames.shape[1], frames.shape[2], side)
        crop_h, crop_w = self.size
        top = int(rng.randint(0, new_h - crop_h)) if new_h > crop_h else 0
        left = int(rng.randint(0, new_w - crop_w)) if new_w > crop_w else 0
        flip = self._streams.py.random() < self.prob
        frames = resize(frames, new_w, new_h)[:, top:top + crop_h, left:left + crop_w]
        return to_tensor(frames[:, :, ::-1] if flip else frames, self.mean, self.std)


class _TestTransform:
    """Ten or three crops (or the centre one) of every frame, to tensor, normalised."""

    def __init__(self, size: int | Sequence[int], num_crop: int, mean: Sequence[float], std: Sequence[float]) -> None:
        if num_crop not in (1, 3, 10):
            raise ValueError(f"num_crop must be 1, 3 or 10, got {num_crop}")
        self.size, self.num_crop, self.mean, self.std = _pair(size), num_crop, tuple(mean), tuple(std)

    def __call__(self, frames: Any) -> np.ndarray:
        crop = {1: center_crop, 3: three_crop, 10: ten_crop}[self.num_crop]
        return to_tensor(crop(frames, self.size), self.mean, self.std)


def train_transform(data_aug: str, size: int, new_height: int = 256, new_width: int = 340,
                    scale_ratios: Sequence[float] = SCALE_RATIOS, mean: Sequence[float] = IMAGENET_MEAN,
                    std: Sequence[float] = IMAGENET_STD, seed: int | None = None) -> Any:
    """The training transform of GluonCV's ``--data-aug`` ``v1``, ``v2`` or ``v3`` (v2 scales the short
    side to ``new_height``; v3 draws it from ``[new_height, new_width]``)."""
    if data_aug == "v1":
        return VideoTrainTransform(size, scale_ratios, mean, std, seed=seed)
    if data_aug == "v2":
        return VideoTrainTransformV2(size, new_height, scale_ratios, mean, std, seed=seed)
    if data_aug == "v3":
        return VideoTrainTransformV3(size, new_height, new_width, mean, std, seed=seed)
    raise ValueError(f"data_aug must be v1, v2 or v3, got {data_aug!r}")


def val_transform(data_aug: str, size: int, new_height: int = 256, mean: Sequence[float] = IMAGENET_MEAN,
                  std: Sequence[float] = IMAGENET_STD) -> Any:
    """The validation transform paired with :func:`train_transform`'s ``data_aug``."""
    if data_aug == "v1":
        return VideoValTransform(size, mean, std)
    if data_aug in ("v2", "v3"):
        return VideoValTransformV2(size, new_height, mean, std)
    raise ValueError(f"data_aug must be v1, v2 or v3, got {data_aug!r}")


def multi_crop_transform(size: int, num_crop: int = 1, mean: Sequence[float] = IMAGENET_MEAN,
                   std: Sequence[float] = IMAGENET_STD) -> Any:
    """Multi-crop testing as GluonCV's ``test_recognizer.py``: ``num_crop`` 10 (ten-crop), 3
    (three-crop, frames already short-side scaled) or 1 (centre crop)."""
    return _TestTransform(size, num_crop, mean, std)
