"""Video classification datasets: Kinetics-400/700, UCF101, HMDB51, Something-Something-v2, and your own.

The videos are yours to download (their licences forbid redistribution); each reader takes the
folder you keep them in and reads either layout:

1. a **list file** as GluonCV's preparation scripts write it, one video a line
   ``relative/path num_frames label`` (paths relative to the data folder; a path to a folder of
   frames ``img_00001.jpg`` ... or to a video file). :func:`video_list` reads any such file.
2. the dataset's **own split files** as published:

   =============  ==============================================================================
   kinetics400    ``ROOT/{train,val}/<class name>/<video>.mp4`` (the official downloader's folders,
   kinetics700    class names as in the official CSV, e.g. ``hurling (sport)``)
   ucf101         ``ROOT/UCF-101/<Class>/v_*.avi`` and ``ROOT/ucfTrainTestlist/{classInd,trainlist0N,testlist0N}.txt``
   hmdb51         ``ROOT/hmdb51_org/<class>/*.avi`` and ``ROOT/testTrainMulti_7030_splits/<class>_test_splitN.txt``
                  (``1``: training, ``2``: testing)
   sthsthv2       ``ROOT/20bn-something-something-v2/<id>.webm`` and
                  ``ROOT/something-something-v2-{train,validation}.json``
   =============  ==============================================================================

Labels are indices into GluonCV's class lists (``gluon_cv_core.action.classes``), the order of
the published models' outputs. A missing folder or split file is a ``FileNotFoundError`` that says
where the data comes from and which layout is expected.

A sample is GluonCV's: ``(clips, 3, frames, height, width)`` ``float32`` (``(segments, 3, height,
width)`` for one-frame clips, the TSN input) and the label; see :class:`VideoClassification`.
"""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..action.clips import ClipSampler, Mode, open_video
from ..common.worker_random import WorkerRandom

__all__ = ["VideoClassification", "VideoItem", "hmdb51", "kinetics400", "kinetics700", "sthsthv2", "ucf101",
           "video_list"]

#: where each dataset comes from, for the missing-data message
_SOURCES = {
    "kinetics400": "https://github.com/cvdfoundation/kinetics-dataset (Kinetics-400 videos and CSV files)",
    "kinetics700": "https://github.com/cvdfoundation/kinetics-dataset (Kinetics-700 videos and CSV files)",
    "ucf101": "https://www.crcv.ucf.edu/data/UCF101.php (UCF101.rar and the train/test splits)",
    "hmdb51": "https://serre-lab.clps.brown.edu/resource/hmdb-a-large-human-motion-database/ "
              "(hmdb51_org.rar and test_train_splits.rar)",
    "sthsthv2": "https://developer.qualcomm.com/software/ai-datasets/something-something (videos and labels)",
}


@dataclass(frozen=True)
class VideoItem:
    """One video: a file or a folder of frames, its frame count where a list gives it, its label."""

    path: str
    label: int
    num_frames: int | None = None


def _missing(dataset: str, root: str, expected: str) -> FileNotFoundError:
    return FileNotFoundError(
        f"{dataset}: {expected} not found under {root!r}. The videos are not downloaded for you: get them from "
        f"{_SOURCES[dataset]} and lay them out as gluon_cv_core.datasets.video describes, or give a "
        "GluonCV list file (lines 'path num_frames label') with list_file=")


def video_list(list_file: str | os.PathLike[str], data_dir: str | os.PathLike[str],
               video_ext: str = "mp4") -> list[VideoItem]:
    """The videos of a GluonCV list file: ``path num_frames label`` a line, ``path`` relative to
    ``data_dir`` (``video_ext`` is added to a video path without an extension that is not a folder)."""
    list_file, data_dir = os.fspath(list_file), os.fspath(data_dir)
    if not os.path.isfile(list_file):
        raise FileNotFoundError(f"list file {list_file!r} does not exist (expected lines 'path num_frames label')")
    items = []
    with open(list_file, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) < 3:
                raise ValueError(f"{list_file}:{number}: expected 'path num_frames label', got {line.strip()!r}")
            try:
                num_frames, label = int(fields[-2]), int(fields[-1])
            except ValueError:
                raise ValueError(f"{list_file}:{number}: num_frames and label must be integers, got "
                                 f"{line.strip()!r}") from None
            path = os.path.join(data_dir, " ".join(fields[:-2]))
            if not os.path.isdir(path) and not os.path.splitext(path)[1]:
                path = f"{path}.{video_ext}"
            items.append(VideoItem(path, label, num_frames))
    if not items:
        raise ValueError(f"list file {list_file!r} lists no videos")
    return items


class VideoClassification:
    """Clips of videos with their labels, sampled and transformed as GluonCV's ``VideoClsCustom``.

    Parameters
    ----------
    items : sequence of VideoItem
        The videos (see :func:`video_list` and the dataset functions).
    sampler : ClipSampler
        Which frames make a sample (segments, clip length, step, SlowFast packing).
    mode : {"train", "val", "test"}
        Random clip starts (train) or centred ones (val, test; test accepts shorter videos).
    new_width, new_height : int
        Size frames are decoded at (GluonCV's "v1" recipe: 340 x 256); ``-1`` keeps the video's.
    transform : callable, optional
        ``(N, H, W, 3) uint8 -> (N', 3, h, w) float32`` (:mod:`gluon_cv_core.action.transforms`); ``N' = N x crops``.
        Without one a sample is the ``(N, H, W, 3)`` ``uint8`` frames as decoded.
    seed : int, optional
        Seeds the clip starts (per data-loader worker); ``None`` draws from numpy's global stream.

    A transformed sample is ``(clips, 3, frames_per_clip, h, w)``, ``clips = num_segments x crops``;
    with ``new_length=1`` (and no SlowFast) the frame axis is dropped: ``(segments x crops, 3, h, w)``.
    Clips are cut from the transform's output in order, as GluonCV cuts them.
    """

    def __init__(self, items: Sequence[VideoItem], sampler: ClipSampler | None = None, mode: Mode = "train",
                 new_width: int = 340, new_height: int = 256, transform: Callable[[Any], Any] | None = None,
                 name_pattern: str = "img_%05d.jpg", classes: Sequence[str] | None = None,
                 seed: int | None = None) -> None:
        if not items:
            raise ValueError("no videos to read")
        self.items = list(items)
        self.sampler = sampler or ClipSampler()
        self.mode = mode
        self.new_width, self.new_height = new_width, new_height
        self.transform = transform
        self.name_pattern = name_pattern
        self.classes = tuple(classes) if classes is not None else None
        self._random = None if seed is None else WorkerRandom(seed)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> tuple[np.ndarray, int]:
        item = self.items[index]
        video = open_video(item.path, self.new_width, self.new_height, item.num_frames, self.name_pattern)
        rng = None if self._random is None else self._random.rng
        frames = video.frames(self.sampler.frame_indices(len(video), self.mode, rng))
        if self.transform is None:
            return frames, item.label
        data = np.asarray(self.transform(frames), dtype=np.float32)
        per_clip = self.sampler.frames_per_clip
        if data.ndim != 4 or data.shape[0] % per_clip:
            raise ValueError(f"the transform returned {data.shape}; expected (frames x crops, 3, h, w) with a "
                             f"multiple of {per_clip} frames")
        data = data.reshape((-1, per_clip) + data.shape[1:]).transpose(0, 2, 1, 3, 4)
        if self.sampler.new_length == 1 and not self.sampler.slowfast:
            data = data[:, :, 0]
        return data, item.label


def _key(name: str) -> str:
    """A class name as GluonCV spells it, case-folded (``hurling (sport)`` -> ``hurling_-sport-``)."""
    return name.strip().strip('"').replace(" ", "_").replace("(", "-").replace(")", "-").lower()


def _class_index(dataset: str) -> tuple[tuple[str, ...], dict[str, int]]:
    from ..action.classes import classes_of

    classes = classes_of(dataset)
    return classes, {_key(name): i for i, name in enumerate(classes)}


def _make(dataset: str, items: list[VideoItem], kwargs: dict[str, Any]) -> VideoClassification:
    classes, _ = _class_index(dataset)
    kwargs.setdefault("name_pattern", "%06d.jpg" if dataset == "sthsthv2" else "img_%05d.jpg")
    return VideoClassification(items, classes=classes, **kwargs)


def _from_list(dataset: str, root: str, list_file: str | None, data_dir: str | None) -> list[VideoItem] | None:
    if list_file is None:
        return None
    return video_list(list_file if os.path.isabs(list_file) else os.path.join(root, list_file),
                      data_dir or root)


def _check_root(dataset: str, root: str) -> str:
    root = os.path.expanduser(os.fspath(root))
    if not os.path.isdir(root):
        raise _missing(dataset, root, "the dataset folder")
    return root


def _segment(segment: str, names: Sequence[str]) -> str:
    if segment not in names:
        raise ValueError(f"segment must be one of {tuple(names)}, got {segment!r}")
    return segment


def _kinetics(dataset: str, root: str, segment: str, list_file: str | None, data_dir: str | None,
              **kwargs: Any) -> VideoClassification:
    root = _check_root(dataset, root)
    items = _from_list(dataset, root, list_file, data_dir)
    if items is None:
        folder = os.path.join(root, _segment(segment, ("train", "val")))
        if not os.path.isdir(folder):
            raise _missing(dataset, root, f"the folder {segment}/<class name>/<video>.mp4")
        _, index = _class_index(dataset)
        items = []
        for name in sorted(os.listdir(folder)):
            if not os.path.isdir(os.path.join(folder, name)):
                continue
            if _key(name) not in index:
                raise ValueError(f"{dataset}: {os.path.join(folder, name)!r} is not a {dataset} class")
            items += [VideoItem(path, index[_key(name)]) for path in sorted(glob.glob(os.path.join(folder, name, "*")))
                      if os.path.isfile(path)]
        if not items:
            raise _missing(dataset, root, f"videos in {segment}/<class name>/")
    return _make(dataset, items, kwargs)


def kinetics400(root: str, segment: str = "train", list_file: str | None = None, data_dir: str | None = None,
                **kwargs: Any) -> VideoClassification:
    """Kinetics-400 from ``ROOT/{train,val}/<class name>/`` or a list file (``**kwargs``: see
    :class:`VideoClassification`)."""
    return _kinetics("kinetics400", root, segment, list_file, data_dir, **kwargs)


def kinetics700(root: str, segment: str = "train", list_file: str | None = None, data_dir: str | None = None,
                **kwargs: Any) -> VideoClassification:
    """Kinetics-700, laid out as :func:`kinetics400`."""
    return _kinetics("kinetics700", root, segment, list_file, data_dir, **kwargs)


def ucf101(root: str, segment: str = "train", split: int = 1, list_file: str | None = None,
           data_dir: str | None = None, **kwargs: Any) -> VideoClassification:
    """UCF101 split 1, 2 or 3 from its official ``ucfTrainTestlist`` files (``segment`` ``train`` or
    ``test``) or a list file."""
    root = _check_root("ucf101", root)
    items = _from_list("ucf101", root, list_file, data_dir)
    if items is None:
        _segment(segment, ("train", "test"))
        split_file = os.path.join(root, "ucfTrainTestlist", f"{segment}list0{split}.txt")
        if not os.path.isfile(split_file):
            raise _missing("ucf101", root, f"ucfTrainTestlist/{segment}list0{split}.txt")
        _, index = _class_index("ucf101")
        items = []
        with open(split_file, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                relative = line.split()[0]
                name = relative.split("/")[0]
                if _key(name) not in index:
                    raise ValueError(f"{split_file}:{number}: {name!r} is not a UCF101 class")
                items.append(VideoItem(os.path.join(root, "UCF-101", relative), index[_key(name)]))
    return _make("ucf101", items, kwargs)


def hmdb51(root: str, segment: str = "train", split: int = 1, list_file: str | None = None,
           data_dir: str | None = None, **kwargs: Any) -> VideoClassification:
    """HMDB51 split 1, 2 or 3 from its official ``testTrainMulti_7030_splits`` files (``segment``
    ``train``: the videos marked 1, ``test``: marked 2) or a list file."""
    root = _check_root("hmdb51", root)
    items = _from_list("hmdb51", root, list_file, data_dir)
    if items is None:
        wanted = {"train": "1", "test": "2"}[_segment(segment, ("train", "test"))]
        split_files = sorted(glob.glob(os.path.join(root, "testTrainMulti_7030_splits", f"*_test_split{split}.txt")))
        if not split_files:
            raise _missing("hmdb51", root, f"testTrainMulti_7030_splits/<class>_test_split{split}.txt")
        _, index = _class_index("hmdb51")
        items = []
        for split_file in split_files:
            name = os.path.basename(split_file)[: -len(f"_test_split{split}.txt")]
            if _key(name) not in index:
                raise ValueError(f"{split_file}: {name!r} is not an HMDB51 class")
            with open(split_file, encoding="utf-8") as handle:
                for line in handle:
                    fields = line.split()
                    if len(fields) == 2 and fields[1] == wanted:
                        items.append(VideoItem(os.path.join(root, "hmdb51_org", name, fields[0]), index[_key(name)]))
    return _make("hmdb51", items, kwargs)


def sthsthv2(root: str, segment: str = "train", list_file: str | None = None, data_dir: str | None = None,
             **kwargs: Any) -> VideoClassification:
    """Something-Something-v2 from ``something-something-v2-{train,validation}.json`` (``segment``
    ``train`` or ``val``) or a list file (GluonCV's ``train_videofolder.txt``, frames ``%06d.jpg``)."""
    root = _check_root("sthsthv2", root)
    items = _from_list("sthsthv2", root, list_file, data_dir)
    if items is None:
        name = {"train": "train", "val": "validation"}[_segment(segment, ("train", "val"))]
        split_file = os.path.join(root, f"something-something-v2-{name}.json")
        if not os.path.isfile(split_file):
            raise _missing("sthsthv2", root, f"something-something-v2-{name}.json")
        _, index = _class_index("sthsthv2")
        with open(split_file, encoding="utf-8") as handle:
            entries = json.load(handle)
        items = []
        for entry in entries:
            template = entry["template"].replace("[", "").replace("]", "")
            if _key(template) not in index:
                raise ValueError(f"{split_file}: video {entry['id']}: {template!r} is not a Something-Something-v2 "
                                 "class")
            items.append(VideoItem(os.path.join(root, "20bn-something-something-v2", f"{entry['id']}.webm"),
                                   index[_key(template)]))
    return _make("sthsthv2", items, kwargs)
