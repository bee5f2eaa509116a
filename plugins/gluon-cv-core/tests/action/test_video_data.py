"""Video decoding, clip sampling, transforms and datasets against GluonCV 0.10 on generated videos."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import cv2
import numpy as np
import pytest

from gluon_cv_core.action import transforms as vt
from gluon_cv_core.action.clips import ClipSampler, FrameFolder, VideoReader, VideoReadError, open_video
from gluon_cv_core.datasets.video import (
    VideoClassification,
    VideoItem,
    hmdb51,
    kinetics400,
    kinetics700,
    sthsthv2,
    ucf101,
    video_list,
)

from gluoncv.data import VideoClsCustom
from gluoncv.data.transforms import video as gvideo

# decord 0.6 mis-decodes some frame widths (48 px gives 4 channels); 64 x 48 decodes cleanly
WIDTH, HEIGHT = 64, 48


def write_video(path: Path, num_frames: int, width: int = WIDTH, height: int = HEIGHT) -> Path:
    """A small MPEG-4 video whose frames differ (a moving bar and a frame-number shade)."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 10, (width, height))
    for i in range(num_frames):
        frame = np.full((height, width, 3), 20, np.uint8)
        frame[:, :, 2] = (i * 11) % 256
        frame[:, (i * 3) % width:(i * 3) % width + 6, 1] = 250
        writer.write(frame)
    writer.release()
    return path


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("videos")
    return {"long": write_video(folder / "long.mp4", 24), "short": write_video(folder / "short.mp4", 5)}


class _Recorder:
    """Stands in for decord's reader in GluonCV's index loop: keeps the frame numbers it is asked for."""

    def get_batch(self, ids: list[int]) -> "_Recorder":
        self.ids = list(ids)
        return self

    def asnumpy(self) -> np.ndarray:
        return np.zeros((len(self.ids), 1, 1, 3))


def _gluoncv_indices(duration: int, mode: str, seed: int, **kwargs: object) -> list[int]:
    dataset = VideoClsCustom("", "", lazy_init=True, train=mode == "train", test_mode=mode == "test", **kwargs)
    np.random.seed(seed)
    sample = {"train": dataset._sample_train_indices, "val": dataset._sample_val_indices,
              "test": dataset._sample_test_indices}[mode]
    starts, skips = sample(duration)
    recorder = _Recorder()
    loader = dataset._video_TSN_decord_slowfast_loader if kwargs.get("slowfast") else \
        dataset._video_TSN_decord_batch_loader
    loader("video", recorder, duration, starts, skips)
    return recorder.ids


def test_frame_indices_equal_gluoncv_for_every_sampling() -> None:
    cases = 0
    for duration, segments, length, step, jitter, mode in itertools.product(
            (1, 3, 7, 17, 64), (1, 3, 8), (1, 4, 32), (1, 2, 4), (False, True), ("train", "val", "test")):
        kwargs = dict(num_segments=segments, new_length=length, new_step=step, temporal_jitter=jitter)
        ours = ClipSampler(**kwargs).frame_indices(duration, mode, np.random.RandomState(cases))
        assert ours.tolist() == _gluoncv_indices(duration, mode, cases, **kwargs), (duration, kwargs, mode)
        cases += 1
    for duration, segments, length, slow, fast, mode in itertools.product(
            (5, 40, 90), (1, 2), (32, 64), (8, 16), (2, 4), ("train", "val", "test")):
        kwargs = dict(num_segments=segments, new_length=length, slowfast=True, slow_temporal_stride=slow,
                      fast_temporal_stride=fast)
        ours = ClipSampler(**kwargs).frame_indices(duration, mode, np.random.RandomState(cases))
        assert ours.tolist() == _gluoncv_indices(duration, mode, cases, **kwargs), (duration, kwargs, mode)
        cases += 1


def test_short_videos_repeat_their_last_reached_frame() -> None:
    assert ClipSampler(new_length=8).frame_indices(5, "val").tolist() == [0, 1, 2, 3, 3, 3, 3, 3]
    assert ClipSampler(new_length=4, new_step=2).frame_indices(5, "test").tolist() == [0, 2, 2, 2]
    assert ClipSampler(num_segments=3).frame_indices(2, "val").tolist() == [0, 0, 0]
    sampler = ClipSampler(new_length=32, slowfast=True, slow_temporal_stride=8, fast_temporal_stride=2)
    assert sampler.frames_per_clip == 20 and len(sampler.frame_indices(3, "train")) == 20
    with pytest.raises(ValueError, match="at least one frame"):
        ClipSampler().frame_indices(0)
    with pytest.raises(ValueError, match="new_step=1"):
        ClipSampler(new_length=8, new_step=2, slowfast=True, slow_temporal_stride=4)
    with pytest.raises(ValueError, match="mode"):
        ClipSampler().frame_indices(9, "eval")  # type: ignore[arg-type]


def _to_tensor_list(frames: list[np.ndarray]) -> list[np.ndarray]:
    return [np.transpose(f, (2, 0, 1)) / 255.0 for f in frames]


@pytest.mark.parametrize("mode,kwargs", [
    ("train", dict(num_segments=3, new_length=1)),
    ("val", dict(new_length=8, new_step=2)),
    ("test", dict(num_segments=2, new_length=4, temporal_jitter=True, new_step=3)),
    ("val", dict(new_length=16, slowfast=True, slow_temporal_stride=8, fast_temporal_stride=2)),
])
def test_decoded_clips_equal_gluoncv_video_loader(videos: dict[str, Path], tmp_path: Path, mode: str,
                                                  kwargs: dict) -> None:
    setting = tmp_path / "list.txt"
    setting.write_text(f"{videos['long']} 24 3\n")
    theirs = VideoClsCustom("", str(setting), train=mode == "train", test_mode=mode == "test", video_loader=True,
                            use_decord=True, new_width=40, new_height=32, target_width=40, target_height=32,
                            transform=_to_tensor_list, **kwargs)
    ours = VideoClassification([VideoItem(str(videos["long"]), 3)], ClipSampler(**kwargs), mode, new_width=40,
                               new_height=32, transform=lambda f: vt.to_tensor(f, (0, 0, 0), (1, 1, 1)), seed=7)
    np.random.seed(7)
    expected, label = theirs[0]
    data, our_label = ours[0]
    assert label == our_label == 3
    assert data.shape == expected.shape and data.dtype == np.float32
    np.testing.assert_allclose(data, expected.asnumpy(), atol=1e-6)


def test_frame_folders_equal_gluoncv_frame_loader(tmp_path: Path) -> None:
    folder = tmp_path / "frames" / "clip"
    folder.mkdir(parents=True)
    rs = np.random.RandomState(0)
    for i in range(1, 10):
        cv2.imwrite(str(folder / f"img_{i:05d}.png"), rs.randint(0, 256, (30, 44, 3)).astype(np.uint8))
    setting = tmp_path / "list.txt"
    setting.write_text("clip 9 1\n")
    kwargs = dict(num_segments=2, new_length=3, new_step=2)
    theirs = VideoClsCustom(str(tmp_path / "frames"), str(setting), train=False, name_pattern="img_%05d.png",
                            new_width=40, new_height=32, target_width=40, target_height=32,
                            transform=_to_tensor_list, **kwargs)
    items = video_list(setting, tmp_path / "frames")
    ours = VideoClassification(items, ClipSampler(**kwargs), "val", 40, 32, name_pattern="img_%05d.png",
                               transform=lambda f: vt.to_tensor(f, (0, 0, 0), (1, 1, 1)))
    np.testing.assert_allclose(ours[0][0], theirs[0][0].asnumpy(), atol=1e-6)
    (folder / "img_00005.png").unlink()
    with pytest.raises(VideoReadError, match="img_00005.png"):
        FrameFolder(folder, 9, "img_%05d.png").frames([4])


def test_reader_decodes_each_frame_once_in_any_order(videos: dict[str, Path]) -> None:
    reader = VideoReader(videos["long"])
    assert len(reader) == 24
    frames = reader.frames([9, 2, 9, 23])
    assert frames.shape == (4, HEIGHT, WIDTH, 3) and frames.dtype == np.uint8
    np.testing.assert_array_equal(frames[0], frames[2])
    np.testing.assert_array_equal(frames[1], reader.frames([2])[0])
    assert frames[3, 0, 0, 0] > frames[1, 0, 0, 0]  # red shade grows with the frame number
    with pytest.raises(IndexError, match="has 24"):
        reader.frames([24])


def test_bad_videos_are_errors_naming_the_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.mp4"
    empty.write_bytes(b"")
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video" * 50)
    with pytest.raises(VideoReadError, match="empty.mp4.*0 bytes"):
        VideoReader(empty)
    with pytest.raises(VideoReadError, match="cannot decode video .*junk.mp4"):
        open_video(junk)
    with pytest.raises(FileNotFoundError, match="missing.mp4"):
        VideoReader(tmp_path / "missing.mp4")
    with pytest.raises(ValueError, match="number of frames"):
        open_video(tmp_path)
    dataset = VideoClassification([VideoItem(str(junk), 0)], ClipSampler(new_length=4))
    with pytest.raises(VideoReadError, match="junk.mp4"):
        dataset[0]


def test_short_video_sample_is_padded(videos: dict[str, Path]) -> None:
    dataset = VideoClassification([VideoItem(str(videos["short"]), 2)], ClipSampler(new_length=8), "val",
                                  transform=vt.VideoValTransform(32), new_width=-1, new_height=-1)
    data, label = dataset[0]
    assert data.shape == (1, 3, 8, 32, 32) and label == 2
    np.testing.assert_array_equal(data[0, :, 3], data[0, :, 7])  # frames 3 .. 7 repeat the 4th frame
    assert not np.array_equal(data[0, :, 2], data[0, :, 3])


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_transforms_equal_gluoncv(seed: int) -> None:
    frames = np.random.RandomState(seed).randint(0, 256, (4, 40, 56, 3)).astype(np.uint8)
    frames_list = list(frames)
    mean, std = vt.IMAGENET_MEAN, vt.IMAGENET_STD
    ratios = list(vt.SCALE_RATIOS)
    pairs = []
    random.seed(seed)
    pairs.append((gvideo.VideoGroupTrainTransform((24, 24), ratios, mean, std)(frames_list),
                  vt.VideoTrainTransform(24, seed=seed)(frames)))
    random.seed(seed)
    pairs.append((gvideo.VideoGroupTrainTransformV2((24, 24), 32, ratios, mean, std)(frames_list),
                  vt.VideoTrainTransformV2(24, 32, seed=seed)(frames)))
    random.seed(seed)
    np.random.seed(seed)
    pairs.append((gvideo.VideoGroupTrainTransformV3((24, 24), 28, 40, mean, std)(frames_list),
                  vt.VideoTrainTransformV3(24, 28, 40, seed=seed)(frames)))
    random.seed(seed)  # seed=None: Python's global stream, as GluonCV's
    expected = gvideo.VideoGroupTrainTransform((24, 24), ratios, mean, std)(frames_list)
    random.seed(seed)
    pairs.append((expected, vt.train_transform("v1", 24)(frames)))
    pairs.append((gvideo.VideoGroupValTransform(24, mean, std)(frames_list), vt.VideoValTransform(24)(frames)))
    pairs.append((gvideo.VideoGroupValTransformV2((24, 24), 30, mean, std)(frames_list),
                  vt.val_transform("v2", 24, 30)(frames)))
    ten = gvideo.VideoNormalize(mean, std)(gvideo.VideoToTensor()(gvideo.VideoTenCrop(24)(frames_list)))
    pairs.append((ten, vt.multi_crop_transform(24, 10)(frames)))
    three = gvideo.VideoNormalize(mean, std)(gvideo.VideoToTensor()(gvideo.VideoThreeCrop(40)(frames_list)))
    pairs.append((three, vt.multi_crop_transform(40, 3)(frames)))
    for expected, ours in pairs:
        assert ours.dtype == np.float32
        np.testing.assert_allclose(ours, np.stack(expected), atol=1e-5)
    square = np.ascontiguousarray(frames[:, :, :40])  # one crop size and place: only the flip is random
    flips = [vt.VideoTrainTransform(24, scale_ratios=[1.0], seed=s)(square) for s in range(8)]
    assert len({f.tobytes() for f in flips}) == 2  # both outcomes were drawn


def test_resize_in_channel_groups_equals_frame_by_frame() -> None:
    frames = np.random.RandomState(1).randint(0, 256, (200, 20, 30, 3)).astype(np.uint8)
    np.testing.assert_array_equal(vt.resize(frames, 17, 13), np.stack([cv2.resize(f, (17, 13)) for f in frames]))


def _touch(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")


def test_datasets_read_their_official_layouts(tmp_path: Path) -> None:
    k400 = tmp_path / "k400"
    _touch(k400 / "train" / "hurling (sport)" / "a_000001_000011.mp4")
    _touch(k400 / "train" / "abseiling" / "b_000001_000011.mp4")
    assert [(Path(i.path).name, i.label) for i in kinetics400(k400).items] == [
        ("b_000001_000011.mp4", 0), ("a_000001_000011.mp4", kinetics400(k400).classes.index("hurling_-sport-"))]
    _touch(tmp_path / "k700" / "val" / "backflip (human)" / "c.mp4")
    k700 = kinetics700(tmp_path / "k700", "val")
    assert k700.classes[k700.items[0].label] == "backflip_-human-"

    ucf = tmp_path / "ucf"
    (ucf / "ucfTrainTestlist").mkdir(parents=True)
    (ucf / "ucfTrainTestlist" / "trainlist01.txt").write_text(
        "ApplyEyeMakeup/v_ApplyEyeMakeup_g08_c01.avi 1\nYoYo/v_YoYo_g25_c05.avi 101\n")
    (ucf / "ucfTrainTestlist" / "testlist01.txt").write_text("Archery/v_Archery_g01_c01.avi\n")
    assert [i.label for i in ucf101(ucf).items] == [0, 100]
    test = ucf101(ucf, "test").items[0]
    assert test.label == 2 and test.path == str(ucf / "UCF-101" / "Archery" / "v_Archery_g01_c01.avi")

    hmdb = tmp_path / "hmdb"
    (hmdb / "testTrainMulti_7030_splits").mkdir(parents=True)
    (hmdb / "testTrainMulti_7030_splits" / "cartwheel_test_split1.txt").write_text("a.avi 1 \nb.avi 2 \nc.avi 0 \n")
    assert [(Path(i.path).name, i.label) for i in hmdb51(hmdb).items] == [("a.avi", 1)]
    assert [Path(i.path).name for i in hmdb51(hmdb, "test").items] == ["b.avi"]

    sth = tmp_path / "sth"
    sth.mkdir()
    (sth / "something-something-v2-validation.json").write_text(json.dumps(
        [{"id": "74225", "label": "closing a door", "template": "Closing [something]", "placeholders": ["a door"]}]))
    item = sthsthv2(sth, "val").items[0]
    assert item.path.endswith("20bn-something-something-v2/74225.webm")
    assert sthsthv2(sth, "val").classes[item.label] == "Closing something"


def test_missing_data_says_where_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="crcv.ucf.edu.*ucfTrainTestlist|ucfTrainTestlist.*crcv"):
        ucf101(tmp_path)
    with pytest.raises(FileNotFoundError, match="kinetics-dataset"):
        kinetics400(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="something-something-v2-train.json"):
        sthsthv2(tmp_path)
    bad = tmp_path / "list.txt"
    bad.write_text("a/b.mp4 10 1\nc/d.mp4 ten 2\n")
    with pytest.raises(ValueError, match="list.txt:2"):
        video_list(bad, tmp_path)
    (tmp_path / "train" / "not a class").mkdir(parents=True)
    with pytest.raises(ValueError, match="not a kinetics400 class"):
        kinetics400(tmp_path)


def test_list_file_dataset_trains_on_tsn_segments(videos: dict[str, Path], tmp_path: Path) -> None:
    listing = tmp_path / "train.txt"
    listing.write_text(f"{videos['long'].name[:-4]} 24 4\n{videos['short'].name} 5 1\n")
    dataset = ucf101(tmp_path, list_file=str(listing), data_dir=str(videos["long"].parent),
                     sampler=ClipSampler(num_segments=3), transform=vt.VideoTrainTransform(32, seed=0), seed=0,
                     new_width=-1, new_height=-1)
    assert [Path(i.path).name for i in dataset.items] == ["long.mp4", "short.mp4"]
    data, label = dataset[1]
    assert data.shape == (3, 3, 32, 32) and label == 1 and dataset.classes[1] == "ApplyLipstick"
