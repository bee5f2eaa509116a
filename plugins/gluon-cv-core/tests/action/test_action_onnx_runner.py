"""The ONNX runner of the action recognisers (``gluon_hub.runtime.load``) against the MXNet path of
``gluon-hub predict``, on one 3D model (R(2+1)D-18, Kinetics-400 labels) and one 2D TSN model
(Inception v1, UCF101 labels) with seeded random weights, on a generated video: the runner's clip
is the array the MXNet path feeds its network, to the bit, and within 1e-6 of GluonCV's own
pipeline (its normalisation rounds differently); the top-k labels are equal and their
probabilities within 1e-6 (the networks' float differences: about 1e-6 of a logit here, 1e-8 of
a probability among 400 or 101 classes); and ``--json`` of both runtimes agrees through the real
CLI, the ONNX one without importing MXNet."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cv_testlib.cli import hub_json
from cv_testlib.exported import exported_models
from cv_testlib.video import gluoncv_clip, write_video

import gluon_hub
import gluon_hub.runtime
from gluon_cv_core.action.predict import SEGMENTS_2D, classify_videos
from gluon_hub.cli import main as hub_main
from gluon_hub.compat import mx

pytestmark = pytest.mark.portability

#: model -> the input it is traced at: frames and size of one clip (3D), size of one frame (2D)
MODELS = {"r2plus1d_resnet18_kinetics400": (16, 112, 112), "inceptionv1_ucf101": (224, 224)}
#: what GluonCV's VideoClsCustom is given to sample as the hub samples each model
GLUONCV_SAMPLING = {"r2plus1d_resnet18_kinetics400": {"new_length": 16, "new_step": 1},
                    "inceptionv1_ucf101": {"num_segments": SEGMENTS_2D}}
TOPK = 5


@pytest.fixture(scope="module")
def videos(tmp_path_factory) -> list[Path]:
    """A 40-frame video and a 6-frame one (shorter than the 3D clip: its last frame repeats)."""
    folder = tmp_path_factory.mktemp("videos")
    return [write_video(folder / "long.mp4", 40), write_video(folder / "short.mp4", 6)]


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, tuple[object, Path, Path]]:
    """Each model with seeded random weights: the network, its .params and its ONNX file (batch
    axis free, sizes fixed)."""
    return exported_models(MODELS, tmp_path_factory.mktemp("onnx"), dynamic_spatial=False)


def _recording(classes: int):
    """A stand-in network that keeps, as numpy, every input the MXNet path gives it (and scores
    nothing: the clips are what is compared)."""
    seen = []

    def call(batch):
        seen.append(batch.asnumpy())
        return mx.nd.zeros((batch.shape[0], classes))

    return call, seen


@pytest.mark.parametrize("name", list(MODELS))
def test_clips_are_the_mxnet_paths_and_gluoncvs(exported, videos, name):
    runner = gluon_hub.runtime.load(name, exported[name][2])
    assert type(runner).__name__ == "ActionRecognizer" and runner.session.provider == "CPUExecutionProvider"
    spec = gluon_hub.info(name)
    recorder, seen = _recording(spec.input.num_classes)
    classify_videos(recorder, spec, [str(v) for v in videos])
    for video, fed in zip(videos, seen):
        clip = runner.to_input(video)
        rows = (1, 3, *MODELS[name]) if len(MODELS[name]) == 3 else (SEGMENTS_2D, 3, *MODELS[name])
        assert clip.shape == rows and clip.dtype == np.float32
        np.testing.assert_array_equal(clip, fed)
        reference = gluoncv_clip(video, MODELS[name][-1], spec.input.mean, spec.input.std, **GLUONCV_SAMPLING[name])
        np.testing.assert_allclose(clip, reference.asnumpy(), rtol=0, atol=1e-6)
    assert not np.array_equal(runner.to_input(videos[0]), runner.to_input(videos[1]))


def _assert_ordered_apart(probabilities: list[float]) -> None:
    """Best first, each more than 1e-7 from the next (ten times the runtimes' differences), so
    the order is the networks' and not float rounding."""
    assert min(-np.diff(probabilities)) > 1e-7, probabilities


def test_top_k_labels_and_probabilities_are_mxnets(exported, videos):
    name = "inceptionv1_ucf101"  # the 3D model is compared through the CLI only (its network takes seconds)
    net, _, onnx_file = exported[name]
    runner = gluon_hub.runtime.load(name, onnx_file)
    spec = gluon_hub.info(name)
    paths = [str(v) for v in videos]
    want = classify_videos(net, spec, paths, topk=TOPK)
    got = runner.classify(paths, topk=TOPK)
    labels = spec.class_names(spec.input.num_classes)
    for w, g in zip(want, got):
        _assert_ordered_apart([p for _, p in w])
        assert [label for label, _ in g] == [label for label, _ in w] and all(label in labels for label, _ in g)
        np.testing.assert_allclose([p for _, p in g], [p for _, p in w], rtol=0, atol=1e-6)
    assert want[0] != want[1]  # the two videos are told apart
    assert runner.classify(paths[:1], topk=1) == [got[0][:1]]


def test_a_file_with_a_fixed_batch_runs_a_2d_models_segments_in_turn(exported, videos, tmp_path):
    name = "inceptionv1_ucf101"
    net, _, onnx_file = exported[name]
    clip = gluon_hub.runtime.load(name, onnx_file).to_input(videos[0])
    scores = gluon_hub.runtime.load(name, onnx_file)(clip)
    gluon_hub.export(net, tmp_path / "batch1.onnx", format="onnx", input_shape=(1, 3, *MODELS[name]))  # the default
    runner = gluon_hub.runtime.load(name, tmp_path / "batch1.onnx")
    assert runner.batch == 1 and clip.shape[0] == SEGMENTS_2D
    np.testing.assert_allclose(runner(clip), scores, rtol=0, atol=1e-6)
    gluon_hub.export(net, tmp_path / "batch2.onnx", format="onnx", input_shape=(2, 3, *MODELS[name]))
    with pytest.raises(ValueError, match="exported for batches of 2, which do not divide the 3 rows of a clip; "
                       "export it with dynamic_batch=True"):
        gluon_hub.runtime.load(name, tmp_path / "batch2.onnx")(clip)


@pytest.mark.parametrize("name, count", [("r2plus1d_resnet18_kinetics400", 1), ("inceptionv1_ucf101", 2)])
def test_cli_json_is_the_same_for_both_runtimes(exported, videos, name, count):
    _, params, onnx_file = exported[name]
    videos = videos[:count]  # one video for the 3D model, whose network takes seconds in each runtime
    common = ("predict", name, *map(str, videos), "--json", "-k", str(TOPK))
    by_mxnet = hub_json(*common, "--params", str(params))
    by_onnx = hub_json(*common, "--runtime", "onnx", "--model-file", str(onnx_file), check_no_mxnet=True)
    assert [r["video"] for r in by_onnx] == [r["video"] for r in by_mxnet] == [str(v) for v in videos]
    for want, got in zip(by_mxnet, by_onnx):
        assert set(got) == set(want) == {"video", "top"}
        assert len(got["top"]) == len(want["top"]) == TOPK
        _assert_ordered_apart([w["score"] for w in want["top"]])
        assert all(set(g) == set(w) == {"label", "score"} for w, g in zip(want["top"], got["top"]))
        assert [g["label"] for g in got["top"]] == [w["label"] for w in want["top"]]
        np.testing.assert_allclose([g["score"] for g in got["top"]], [w["score"] for w in want["top"]],
                                   rtol=0, atol=1e-6)


def test_a_file_of_another_model_is_refused_saying_what_to_do(exported):
    with pytest.raises(ValueError, match=r"feeds \(batch, 3, 16, 112, 112\) in layout NCTHW and expects one output "
                       r"of \(batch, classes\).*gluon_hub.export\('r2plus1d_resnet18_kinetics400'"):
        gluon_hub.runtime.load("r2plus1d_resnet18_kinetics400", exported["inceptionv1_ucf101"][2])


@pytest.mark.parametrize("extra, message", [
    (["--out", "top.png"], "--out draws pictures for detection and segmentation; action recognition prints classes"),
    (["-k", "0"], "--topk must be at least 1"),
    (["--classes", "a,b"], "--classes apply to the MXNet runtime"),
])
def test_cli_errors_say_what_to_do(exported, videos, capsys, extra, message):
    onnx_file = str(exported["inceptionv1_ucf101"][2])
    assert hub_main(["predict", "inceptionv1_ucf101", str(videos[0]), "--runtime", "onnx", "--model-file", onnx_file,
                     *extra]) != 0
    assert message in capsys.readouterr().err


def test_a_missing_video_is_named(exported, capsys, tmp_path):
    onnx_file = str(exported["inceptionv1_ucf101"][2])
    missing = tmp_path / "nothing.mp4"
    assert hub_main(["predict", "inceptionv1_ucf101", str(missing), "--runtime", "onnx", "--model-file",
                     onnx_file]) != 0
    assert f"video {str(missing)!r} does not exist" in capsys.readouterr().err
