"""``gluon-hub predict`` on videos: GluonCV's sampling and preprocessing, then the top-k classes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from cv_testlib.video import gluoncv_clip, write_video

import gluon_hub
from gluon_cv_core.action.clips import VideoReadError
from gluon_cv_core.action.predict import SEGMENTS_2D, classify_videos, clip_sampler
from gluon_cv_core.predict import main
from gluon_hub.compat import mx


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_video(tmp_path_factory.mktemp("action") / "clip.mp4")


def _tiny(layout: str, classes: int) -> mx.gluon.HybridBlock:
    """A small network of the layout's dimensionality (convolution, global pooling, dense)."""
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv3D(4, 3) if layout == "NCTHW" else mx.gluon.nn.Conv2D(4, 3),
            mx.gluon.nn.GlobalAvgPool3D() if layout == "NCTHW" else mx.gluon.nn.GlobalAvgPool2D(),
            mx.gluon.nn.Dense(classes))
    net.initialize(mx.init.Xavier(magnitude=3))
    return net


def _gluoncv_probs(net: mx.gluon.HybridBlock, path: Path, size: int, **sampling: int) -> np.ndarray:
    """Softmax of ``net`` on GluonCV's own pipeline (decord at 340 x 256, centre crop, normalise)."""
    spec = gluon_hub.info("i3d_resnet50_v1_kinetics400")
    clips = gluoncv_clip(path, size, spec.input.mean, spec.input.std, **sampling)
    return mx.nd.softmax(net(clips).mean(axis=0, keepdims=True)).asnumpy()[0]


def test_3d_model_sees_gluoncv_clip(video: Path) -> None:
    base = gluon_hub.info("i3d_resnet50_v1_kinetics400")
    spec = dataclasses.replace(base, input=dataclasses.replace(base.input, shape=(3, 8, 32, 32)))
    assert clip_sampler(spec).new_step == 2  # I3D's recipe: frames two apart
    net = _tiny("NCTHW", 400)
    top = classify_videos(net, spec, [str(video)], topk=400)[0]
    expected = _gluoncv_probs(net, video, 32, new_length=8, new_step=2)
    probs = dict(top)
    labels = spec.class_names(400)
    np.testing.assert_allclose([probs[label] for label in labels], expected, rtol=1e-4, atol=1e-7)
    assert [s for _, s in top] == sorted((s for _, s in top), reverse=True)


def test_2d_model_averages_gluoncv_segments(video: Path) -> None:
    base = gluon_hub.info("resnet18_v1b_kinetics400")
    spec = dataclasses.replace(base, input=dataclasses.replace(base.input, shape=(3, 32, 32)))
    net = _tiny("NCHW", 400)
    top = dict(classify_videos(net, spec, [str(video)], topk=400)[0])
    expected = _gluoncv_probs(net, video, 32, num_segments=SEGMENTS_2D)
    np.testing.assert_allclose([top[label] for label in spec.class_names(400)], expected, rtol=1e-4, atol=1e-7)


def test_samplers_follow_the_model_names() -> None:
    base = gluon_hub.info("i3d_resnet50_v1_kinetics400")

    def named(name: str, frames: int) -> object:
        return dataclasses.replace(base, name=name, input=dataclasses.replace(base.input, shape=(3, frames, 224, 224)))

    assert clip_sampler(named("i3d_slow_resnet101_f16s4_kinetics700", 16)).new_step == 4
    assert clip_sampler(named("r2plus1d_v1_resnet18_kinetics400", 16)).new_step == 1
    slowfast = clip_sampler(named("slowfast_4x16_resnet50_kinetics400", 36))
    assert (slowfast.new_length, slowfast.fast_temporal_stride, slowfast.slow_temporal_stride) == (64, 2, 16)
    assert slowfast.frames_per_clip == 36


def test_predict_command_prints_top_k_of_a_registered_model(video: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["resnet18_v1b_kinetics400", str(video), "--random-weights", "--json", "-k", "3"]) == 0
    captured = capsys.readouterr()
    assert "RANDOM" in captured.err
    record = json.loads(captured.out.strip())
    assert record["video"] == str(video) and len(record["top"]) == 3
    from gluon_cv_core.action.classes import KINETICS400_CLASSES

    scores = [entry["score"] for entry in record["top"]]
    assert all(entry["label"] in KINETICS400_CLASSES for entry in record["top"])
    assert scores == sorted(scores, reverse=True) and 0 < sum(scores) <= 1 + 1e-6


@pytest.mark.parametrize("name, segments", [("resnet18_v1b_kinetics400_int8", 7), ("vgg16_ucf101_int8", 3)])
def test_int8_2d_models_see_the_segments_they_were_quantized_for(name: str, segments: int, video: Path,
                                                                 capsys: pytest.CaptureFixture) -> None:
    """An int8 TSN averages a fixed number of frames inside its graph (GluonCV's: 7 for the ResNets);
    the command used to feed every 2D model 3 and fail on those with 7."""
    spec = gluon_hub.info(name)
    assert clip_sampler(spec).num_segments == segments
    if segments == SEGMENTS_2D:
        return  # the fp32 sampling, which the test above runs
    assert main([name, str(video), "--random-weights", "--json", "-k", "2"]) == 0
    record = json.loads(capsys.readouterr().out.strip())
    assert record["video"] == str(video) and len(record["top"]) == 2


def test_predict_command_names_bad_videos(tmp_path: Path) -> None:
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"\x00\x01" * 100)
    with pytest.raises(FileNotFoundError, match="nothing.mp4"):
        main(["resnet18_v1b_kinetics400", str(tmp_path / "nothing.mp4"), "--random-weights"])
    with pytest.raises(VideoReadError, match="junk.mp4"):
        main(["resnet18_v1b_kinetics400", str(junk), "--random-weights"])
