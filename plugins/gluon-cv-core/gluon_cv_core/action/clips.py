"""Video decoding (``decord``) and GluonCV's clip sampling: segments, dense and uniform clips, SlowFast.

A video of ``D`` frames is cut into ``num_segments`` equal segments (TSN); from each one a clip of
``new_length`` frames, ``new_step`` frames apart, is taken: at a random start in training, at the
segment's centre for validation and testing. ``num_segments=1, new_length=32, new_step=2`` is the
dense sampling of I3D ("f32s2"); ``num_segments=8, new_length=1`` is TSN's uniform sampling, and
``num_segments=10`` in test mode gives GluonCV's 10-clip evaluation. The frame numbers chosen are
GluonCV 0.10's (``VideoClsCustom``) for the same arguments and the same numpy random state, the
tests check this on generated videos.

Short videos are padded, as GluonCV pads them: a clip that would run past the last frame repeats
the frame it had reached (so a 5-frame video sampled with ``new_length=8`` gives frames
0, 1, 2, 3, 3, 3, 3, 3), and when the video is shorter than one clip every segment starts at the
first frame. A video that cannot be decoded or has no frames is an error that names the file
(:class:`VideoReadError`).

Reading is faster than GluonCV's: each distinct frame is decoded once and in increasing order
(padding and overlapping segments repeat frames, which GluonCV decodes again), and the frames come
back as one ``uint8`` array instead of a list (``bench/bench_video_decode.py`` measures it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

__all__ = ["ClipSampler", "FrameFolder", "Mode", "VideoReadError", "VideoReader", "open_video"]

Mode = Literal["train", "val", "test"]
_MODES = ("train", "val", "test")


class VideoReadError(ValueError):
    """A video (or a folder of its frames) that cannot be read; the message names the file."""


@dataclass(frozen=True)
class ClipSampler:
    """Which frames of a video make a sample, as GluonCV's ``VideoClsCustom`` chooses them.

    Parameters
    ----------
    num_segments : int
        Equal parts the video is cut into; one clip is taken from each (TSN; or several test clips).
    new_length : int
        Frames in each clip (1 for 2D models).
    new_step : int
        Distance between a clip's frames (the ``s`` of I3D's "f32s2").
    temporal_jitter : bool
        Move each frame of a clip forward by a random ``0 .. new_step - 1`` (GluonCV draws this in
        every mode).
    slowfast : bool
        Keep every ``fast_temporal_stride``-th frame of the clip for the fast pathway followed by
        every ``slow_temporal_stride``-th for the slow one (GluonCV's SlowFast packing).

    Examples
    --------
    >>> ClipSampler(num_segments=3).frame_indices(30, "val").tolist()
    [5, 15, 25]
    >>> ClipSampler(new_length=8).frame_indices(5, "val").tolist()
    [0, 1, 2, 3, 3, 3, 3, 3]
    """

    num_segments: int = 1
    new_length: int = 1
    new_step: int = 1
    temporal_jitter: bool = False
    slowfast: bool = False
    slow_temporal_stride: int = 16
    fast_temporal_stride: int = 2

    def __post_init__(self) -> None:
        for name in ("num_segments", "new_length", "new_step", "slow_temporal_stride", "fast_temporal_stride"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.slowfast:
            if self.slow_temporal_stride % self.fast_temporal_stride:
                raise ValueError(f"slow_temporal_stride ({self.slow_temporal_stride}) must be a multiple of "
                                 f"fast_temporal_stride ({self.fast_temporal_stride})")
            if self.temporal_jitter or self.new_step != 1:
                raise ValueError("SlowFast sampling reads consecutive frames: use new_step=1 and no temporal_jitter "
                                 "(the strides pick the frames)")
            if self.new_length < self.fast_temporal_stride:
                raise ValueError(f"new_length ({self.new_length}) must be at least fast_temporal_stride "
                                 f"({self.fast_temporal_stride}) for the fast pathway to get any frame")

    @property
    def skip_length(self) -> int:
        """Frames one clip spans."""
        return self.new_length * self.new_step

    @property
    def frames_per_clip(self) -> int:
        """Frames in one sampled clip (for SlowFast: fast then slow pathway frames)."""
        if self.slowfast:
            return self.new_length // self.fast_temporal_stride + self.new_length // self.slow_temporal_stride
        return self.new_length

    def starts(self, num_frames: int, mode: Mode = "train",
               rng: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Each segment's 1-based first frame and each clip position's jitter, GluonCV's way.

        ``rng`` is a ``numpy.random.RandomState`` (default: numpy's global one, as GluonCV's)."""
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")
        rng = np.random if rng is None else rng
        segments, skip = self.num_segments, self.skip_length
        if mode == "train":
            average = (num_frames - skip + 1) // segments
            if average > 0:
                starts = np.arange(segments) * average + rng.randint(average, size=segments)
            elif num_frames > max(segments, skip):
                starts = np.sort(rng.randint(num_frames - skip + 1, size=segments))
            else:
                starts = np.zeros(segments, dtype=int)
        else:
            # validation needs a whole clip per segment; testing only one clip's length
            enough = num_frames > (segments + skip - 1 if mode == "val" else skip - 1)
            if enough:
                tick = (num_frames - skip + 1) / float(segments)
                starts = np.array([int(tick / 2.0 + tick * x) for x in range(segments)])
            else:
                starts = np.zeros(segments, dtype=int)
        if self.temporal_jitter:
            jitter = rng.randint(self.new_step, size=self.new_length)
        else:
            jitter = np.zeros(self.new_length, dtype=int)
        return starts.astype(np.int64) + 1, jitter

    def frame_indices(self, num_frames: int, mode: Mode = "train", rng: Any = None) -> np.ndarray:
        """The 0-based frames of every clip, segment after segment (``num_segments x frames_per_clip``)."""
        if num_frames < 1:
            raise ValueError(f"a video needs at least one frame to sample from, got {num_frames}")
        starts, jitter = self.starts(num_frames, mode, rng)
        position = np.arange(self.new_length)
        # GluonCV moves on by new_step while the next frame stays before the last one, then stays put
        advances = np.maximum(-(-(num_frames - starts) // self.new_step) - 1, 0)
        offset = starts[:, None] + self.new_step * np.minimum(position[None, :], advances[:, None])
        frames = np.where(offset + jitter[None, :] <= num_frames, offset + jitter[None, :], offset) - 1
        if self.slowfast:
            fast = (position + 1) % self.fast_temporal_stride == 0
            slow = fast & ((position + 1) % self.slow_temporal_stride == 0)
            frames = np.concatenate([frames[:, fast], frames[:, slow]], axis=1)
        return frames.reshape(-1)


class VideoReader:
    """A video file opened with ``decord``, optionally resized while decoding (GluonCV's ``new_width``
    and ``new_height``); ``len()`` is its frame count.

    Raises :class:`VideoReadError` naming the file when it is not a video decord can decode or has no
    frames, ``FileNotFoundError`` when it does not exist.
    """

    def __init__(self, path: str | os.PathLike[str], width: int = -1, height: int = -1, num_threads: int = 1) -> None:
        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"video {self.path!r} does not exist")
        try:
            import decord
        except ImportError:
            raise ImportError("reading videos needs decord: pip install 'decord>=0.6' (the "
                              "plugin's [video] extra)") from None
        if os.path.getsize(self.path) == 0:
            raise VideoReadError(f"video {self.path!r} is empty (0 bytes)")
        try:
            self._reader = decord.VideoReader(self.path, width=width, height=height, num_threads=num_threads)
        except Exception as exc:  # decord raises RuntimeError or its own DECORDError, without the cause
            raise VideoReadError(f"cannot decode video {self.path!r}: not a video FFmpeg can read "
                                 f"(damaged, truncated or an unknown format) [{str(exc).splitlines()[0]}]") from None
        self._length = len(self._reader)
        if self._length == 0:
            raise VideoReadError(f"video {self.path!r} has no frames")

    def __len__(self) -> int:
        return self._length

    @property
    def fps(self) -> float:
        """Frames per second the file declares."""
        return float(self._reader.get_avg_fps())

    def frames(self, indices: Any) -> np.ndarray:
        """The frames at 0-based ``indices`` (any order, repeats allowed) as ``(N, H, W, 3)`` RGB ``uint8``.

        Each distinct frame is decoded once, in increasing order, which is what seeking costs least."""
        indices = np.asarray(indices, dtype=np.int64).reshape(-1)
        if indices.size == 0:
            return np.zeros((0,) + tuple(self._reader[0].shape), dtype=np.uint8)
        if indices.min() < 0 or indices.max() >= self._length:
            raise IndexError(f"frames {indices.min()}..{indices.max()} asked of video {self.path!r}, "
                             f"which has {self._length}")
        unique, inverse = np.unique(indices, return_inverse=True)
        try:
            data = self._reader.get_batch(unique.tolist()).asnumpy()
        except Exception as exc:
            raise VideoReadError(f"cannot decode frames {unique.tolist()} of video {self.path!r} "
                                 f"({self._length} frames) [{str(exc).splitlines()[0]}]") from None
        if data.ndim != 4 or data.shape[-1] != 3:
            raise VideoReadError(f"video {self.path!r} decoded to frames of shape {data.shape[1:]}, not H x W x 3")
        return data if unique.size == indices.size and np.array_equal(unique, indices) else data[inverse]


class FrameFolder:
    """A video stored as one image a frame (``img_00001.jpg`` ...: the "rawframes" layouts GluonCV
    reads); frame numbers in the names start at 1. ``width``/``height`` > 0 resize every frame."""

    def __init__(self, directory: str | os.PathLike[str], num_frames: int, name_pattern: str = "img_%05d.jpg",
                 width: int = -1, height: int = -1) -> None:
        self.directory = os.fspath(directory)
        if not os.path.isdir(self.directory):
            raise FileNotFoundError(f"frame folder {self.directory!r} does not exist")
        if num_frames < 1:
            raise VideoReadError(f"frame folder {self.directory!r} is listed with {num_frames} frames; "
                                 "a video needs at least one")
        self.name_pattern = name_pattern
        self.width, self.height = width, height
        self._length = int(num_frames)

    def __len__(self) -> int:
        return self._length

    def frames(self, indices: Any) -> np.ndarray:
        """Frames at 0-based ``indices`` (file ``name_pattern % (index + 1)``) as ``(N, H, W, 3)`` RGB."""
        import cv2

        indices = np.asarray(indices, dtype=np.int64).reshape(-1)
        unique, inverse = np.unique(indices, return_inverse=True)
        images = []
        for index in unique.tolist():
            path = os.path.join(self.directory, self.name_pattern % (index + 1))
            image = cv2.imread(path, cv2.IMREAD_COLOR)
            if image is None:
                raise VideoReadError(f"cannot read frame {index + 1} of {self.directory!r}: {path!r} is missing "
                                     "or not an image")
            if self.width > 0 and self.height > 0 and image.shape[:2] != (self.height, self.width):
                image = cv2.resize(image, (self.width, self.height))
            images.append(image[:, :, ::-1])
        if len({im.shape for im in images}) > 1:
            raise VideoReadError(f"the frames of {self.directory!r} differ in size; give width and height to "
                                 "resize them")
        return np.stack(images)[inverse]


def open_video(path: str | os.PathLike[str], width: int = -1, height: int = -1, num_frames: int | None = None,
               name_pattern: str = "img_%05d.jpg", num_threads: int = 1) -> VideoReader | FrameFolder:
    """A :class:`VideoReader` for a file, a :class:`FrameFolder` for a folder of frames (which needs
    ``num_frames``, the count its list file gives)."""
    if os.path.isdir(path):
        if num_frames is None:
            raise ValueError(f"{os.fspath(path)!r} is a folder of frames: give its number of frames")
        return FrameFolder(path, num_frames, name_pattern, width, height)
    return VideoReader(path, width, height, num_threads)
