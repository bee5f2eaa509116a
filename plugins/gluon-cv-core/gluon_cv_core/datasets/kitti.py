"""KITTI raw data in the layout GluonCV 0.10's ``KITTIRAWDataset`` (Monodepth2's loader) reads.

The data are user-provided (about 175 GB; http://www.cvlibs.net/datasets/kitti/raw_data.php)::

    root/2011_09_26/calib_cam_to_cam.txt, calib_velo_to_cam.txt
    root/2011_09_26/2011_09_26_drive_0001_sync/image_02/data/0000000000.png   (left camera)
    root/2011_09_26/2011_09_26_drive_0001_sync/image_03/data/0000000000.png   (right camera)
    root/2011_09_26/2011_09_26_drive_0001_sync/velodyne_points/data/0000000000.bin

A split file (Monodepth2's ``splits/eigen_zhou/train_files.txt``, ``splits/eigen/test_files.txt``)
has one line per sample: ``FOLDER FRAME SIDE``, for example
``2011_09_26/2011_09_26_drive_0022_sync 473 r``; side ``l``/``2`` is the left camera, ``r``/``3``
the right one.

Each item is a dict with GluonCV's keys: ``("color", frame_id, scale)`` (CHW float32 RGB in
``[0, 1]``, the image resized to ``width / 2**scale`` by ``height / 2**scale``, each scale from the
one before, Lanczos), ``("color_aug", frame_id, scale)`` (the same images: GluonCV never enables
its colour jitter), ``("K", scale)`` / ``("inv_K", scale)`` (4x4 intrinsics: KITTI's average
normalised camera, scaled to each size), ``"depth_gt"`` (``(1, 375, 1242)`` metres from the
velodyne scan projected with the day's calibration, 0 where no point falls; present when the
first sample has a scan) and ``"stereo_T"`` (with frame id ``"s"``: the stereo pair's 0.1-unit
baseline). Frame ids are temporal offsets (``0, -1, 1``) or ``"s"``, the other camera. With
``train=True`` half the items are mirrored left-right, images and depth alike.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

__all__ = ["KITTIRawDepth", "KittiSample", "FULL_RES_SHAPE", "KITTI_INTRINSICS", "read_calib_file", "read_split",
           "velodyne_depth_map"]

#: KITTI's average intrinsics normalised by the image size (GluonCV's and Monodepth2's)
KITTI_INTRINSICS = np.array([[0.58, 0, 0.5, 0], [0, 1.92, 0.5, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=np.float32)
#: (height, width) that ground-truth depth maps are resized to
FULL_RES_SHAPE = (375, 1242)
#: split-file side -> camera number
_CAMERAS = {"2": 2, "3": 3, "l": 2, "r": 3}
_OTHER_SIDE = {"l": "r", "r": "l", "2": "3", "3": "2"}
#: nominal stereo baseline the stereo-trained models learnt
_STEREO_BASELINE = 0.1
_GET_KITTI = ("KITTI raw is user-provided: download the synced+rectified drives and calibration from "
              "http://www.cvlibs.net/datasets/kitti/raw_data.php and unzip them under ROOT (ROOT/2011_09_26/"
              "calib_cam_to_cam.txt, ROOT/2011_09_26/2011_09_26_drive_0001_sync/image_02/data/...)")


@dataclass(frozen=True)
class KittiSample:
    """One line of a split file: the drive folder, the frame number and the camera side."""

    folder: str
    frame_index: int
    side: str

    @property
    def camera(self) -> int:
        return _CAMERAS[self.side]


def read_split(lines: str | os.PathLike[str] | Sequence[str]) -> list[KittiSample]:
    """The samples of a split file (a path) or of its lines; errors name the bad line."""
    source = "split"
    if isinstance(lines, (str, os.PathLike)):
        source = os.fspath(lines)
        if not os.path.isfile(source):
            raise FileNotFoundError(f"split file {source!r} does not exist; Monodepth2's splits are "
                                    "splits/<name>/{train,val,test}_files.txt")
        lines = Path(source).read_text(encoding="utf-8").splitlines()
    samples = []
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 3 or fields[2] not in _CAMERAS or not fields[1].lstrip("-").isdigit():
            raise ValueError(f"{source}, line {number}: {line!r} is not 'FOLDER FRAME SIDE' with SIDE one of "
                             f"{', '.join(_CAMERAS)} (for example '2011_09_26/2011_09_26_drive_0022_sync 473 r')")
        samples.append(KittiSample(fields[0], int(fields[1]), fields[2]))
    if not samples:
        raise ValueError(f"{source} lists no samples")
    return samples


def read_calib_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A KITTI calibration file: ``key: values`` lines, numeric values as float64 arrays."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"calibration file {path!r} does not exist. {_GET_KITTI}")
    data: dict[str, Any] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        value = value.strip()
        try:
            data[key] = np.array([float(v) for v in value.split()])
        except ValueError:  # calib_time and other text
            data[key] = value
    return data


def velodyne_depth_map(calib_dir: str | os.PathLike[str], velo_file: str | os.PathLike[str],
                       camera: int = 2) -> np.ndarray:
    """Ground-truth depth for ``camera``: the scan's points in front of the car projected into the
    rectified image, rounded to pixels as KITTI's devkit does; the nearest point wins a pixel.
    ``(height, width)`` float64 metres of the calibration's ``S_rect``, 0 where no point falls."""
    cam_to_cam = read_calib_file(os.path.join(calib_dir, "calib_cam_to_cam.txt"))
    velo_to_cam = read_calib_file(os.path.join(calib_dir, "calib_velo_to_cam.txt"))
    try:
        width, height = cam_to_cam[f"S_rect_0{camera}"].astype(np.int64)
        rectify = np.eye(4)
        rectify[:3, :3] = cam_to_cam["R_rect_00"].reshape(3, 3)
        project = cam_to_cam[f"P_rect_0{camera}"].reshape(3, 4)
        extrinsic = np.eye(4)
        extrinsic[:3, :3] = velo_to_cam["R"].reshape(3, 3)
        extrinsic[:3, 3] = velo_to_cam["T"]
    except (KeyError, ValueError, AttributeError) as exc:
        raise ValueError(f"the calibration in {os.fspath(calib_dir)!r} lacks or garbles {exc}: expected KITTI's "
                         "S_rect_0N, R_rect_00, P_rect_0N and R, T entries") from None
    velo_file = os.fspath(velo_file)
    if not os.path.isfile(velo_file):
        raise FileNotFoundError(f"velodyne scan {velo_file!r} does not exist. {_GET_KITTI}")
    raw = np.fromfile(velo_file, dtype=np.float32)
    if raw.size % 4:
        raise ValueError(f"velodyne scan {velo_file!r} is not float32 (x, y, z, reflectance) rows")
    points = raw.reshape(-1, 4).astype(np.float64)
    points = points[points[:, 0] >= 0]  # in front of the car
    points[:, 3] = 1.0
    image_points = points @ (project @ rectify @ extrinsic).T
    depth = image_points[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        # KITTI's devkit is 1-based: round, then step back one pixel
        u = np.round(image_points[:, 0] / depth) - 1
        v = np.round(image_points[:, 1] / depth) - 1
    inside = np.isfinite(u) & np.isfinite(v) & (u >= 0) & (v >= 0) & (u < width) & (v < height)
    nearest = np.full((height, width), np.inf)
    np.minimum.at(nearest, (v[inside].astype(np.int64), u[inside].astype(np.int64)), depth[inside])
    nearest[~np.isfinite(nearest) | (nearest < 0)] = 0
    return nearest


def _resize_nearest(depth: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Nearest-neighbour resize by pixel centres (depths must not be blended)."""
    rows = np.minimum(((np.arange(shape[0]) + 0.5) * depth.shape[0] / shape[0]).astype(np.int64), depth.shape[0] - 1)
    cols = np.minimum(((np.arange(shape[1]) + 0.5) * depth.shape[1] / shape[1]).astype(np.int64), depth.shape[1] - 1)
    return depth[rows[:, None], cols[None, :]]


class KITTIRawDepth:
    """KITTI raw frames for Monodepth2 training and evaluation (see the module docstring).

    Parameters
    ----------
    root : the folder holding the dates (``root/2011_09_26/...``).
    split : a split file or its lines (``FOLDER FRAME SIDE``).
    height, width : the network's input size (scale 0); multiples of 32 for Monodepth2.
    frame_ids : temporal offsets and/or ``"s"`` (the other camera); ``(0, -1, 1)`` for training
        with video, ``(0,)`` for evaluation.
    num_scales : image pyramid levels per frame.
    train : mirror half of the items.
    img_ext : the images' extension (``.png`` as unzipped; Monodepth2 suggests converting to ``.jpg``).
    """

    def __init__(self, root: str | os.PathLike[str], split: str | os.PathLike[str] | Sequence[str],
                 height: int = 192, width: int = 640, frame_ids: Sequence[int | str] = (0,), num_scales: int = 4,
                 train: bool = False, img_ext: str = ".png") -> None:
        self.root = os.fspath(root)
        if not os.path.isdir(self.root):
            raise FileNotFoundError(f"KITTI root {self.root!r} does not exist. {_GET_KITTI}")
        if height < 2 ** (num_scales - 1) or width < 2 ** (num_scales - 1) or num_scales < 1:
            raise ValueError(f"a {height}x{width} input has no {num_scales} scales")
        bad = [f for f in frame_ids if f != "s" and not isinstance(f, int)]
        if bad or not frame_ids:
            raise ValueError(f"frame_ids are integer offsets or 's' (the other camera), got {list(frame_ids)}")
        self.samples = read_split(split)
        self.height, self.width, self.num_scales = height, width, num_scales
        self.frame_ids, self.train, self.img_ext = tuple(frame_ids), train, img_ext
        first = self.samples[0]
        image = self.image_path(first.folder, first.frame_index, first.side)
        if not os.path.isfile(image):
            raise FileNotFoundError(f"the split's first frame {image!r} does not exist: is {self.root!r} KITTI raw "
                                    f"with {img_ext!r} images? {_GET_KITTI}")
        # as GluonCV: ground truth is loaded when the first sample has a scan
        self.has_depth = os.path.isfile(self.velodyne_path(first.folder, first.frame_index))

    def __len__(self) -> int:
        return len(self.samples)

    def image_path(self, folder: str, frame_index: int, side: str) -> str:
        return os.path.join(self.root, folder, f"image_0{_CAMERAS[side]}", "data",
                            f"{frame_index:010d}{self.img_ext}")

    def velodyne_path(self, folder: str, frame_index: int) -> str:
        return os.path.join(self.root, folder, "velodyne_points", "data", f"{frame_index:010d}.bin")

    def _image(self, folder: str, frame_index: int, side: str, flip: bool) -> Any:
        from PIL import Image, UnidentifiedImageError

        path = self.image_path(folder, frame_index, side)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"frame {path!r} does not exist (asked for by {folder} frame {frame_index}, "
                                    f"frame ids {list(self.frame_ids)}); the split must leave room for the "
                                    "temporal neighbours")
        try:
            with Image.open(path) as image:
                image = image.convert("RGB")
        except (UnidentifiedImageError, OSError) as exc:
            raise ValueError(f"cannot decode image {path!r}: {exc}") from None
        return image.transpose(Image.FLIP_LEFT_RIGHT) if flip else image

    def depth(self, sample: KittiSample, flip: bool = False) -> np.ndarray:
        """``(375, 1242)`` float32 ground-truth depth of a sample (see :func:`velodyne_depth_map`)."""
        calib_dir = os.path.join(self.root, sample.folder.split("/")[0])
        depth = velodyne_depth_map(calib_dir, self.velodyne_path(sample.folder, sample.frame_index), sample.camera)
        depth = _resize_nearest(depth, FULL_RES_SHAPE).astype(np.float32)
        return np.ascontiguousarray(depth[:, ::-1]) if flip else depth

    def __getitem__(self, index: int) -> dict[Any, Any]:
        from PIL import Image

        from gluon_hub.compat import mx

        sample = self.samples[index]
        flip = self.train and random.random() > 0.5
        item: dict[Any, Any] = {}
        for frame_id in self.frame_ids:
            if frame_id == "s":
                image = self._image(sample.folder, sample.frame_index, _OTHER_SIDE[sample.side], flip)
            else:
                image = self._image(sample.folder, sample.frame_index + frame_id, sample.side, flip)
            for scale in range(self.num_scales):
                image = image.resize((self.width // 2 ** scale, self.height // 2 ** scale), Image.LANCZOS)
                pixels = np.asarray(image, dtype=np.float32).transpose(2, 0, 1) / 255.0
                item[("color", frame_id, scale)] = item[("color_aug", frame_id, scale)] = mx.nd.array(pixels)
        for scale in range(self.num_scales):
            intrinsics = KITTI_INTRINSICS.copy()
            intrinsics[0, :] *= self.width // 2 ** scale
            intrinsics[1, :] *= self.height // 2 ** scale
            item[("K", scale)] = mx.nd.array(intrinsics)
            item[("inv_K", scale)] = mx.nd.array(np.linalg.pinv(intrinsics))
        if self.has_depth:
            item["depth_gt"] = mx.nd.array(self.depth(sample, flip)[None])
        if "s" in self.frame_ids:
            stereo = np.eye(4, dtype=np.float32)
            # the other camera sits to the right of the left one; mirroring swaps them
            stereo[0, 3] = (-1 if flip else 1) * (-1 if sample.camera == 2 else 1) * _STEREO_BASELINE
            item["stereo_T"] = mx.nd.array(stereo)
        return item
