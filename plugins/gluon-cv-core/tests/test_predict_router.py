"""``gluon-hub predict`` is a router: every task the plugin registers models for has its own
predict module with ``run(args, spec)``, and the router treats none of them specially."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re

import pytest

import gluon_hub
from gluon_cv_core import predict


def test_every_registered_task_has_a_predict_module_with_run() -> None:
    tasks = {gluon_hub.info(name).task for name in gluon_hub.list_models(plugin="cv")}
    assert tasks == set(predict._TASK_MODULES)
    for task, module in predict._TASK_MODULES.items():
        run = importlib.import_module(f"gluon_cv_core.{module}").run
        assert list(inspect.signature(run).parameters) == ["args", "spec"], task


def test_every_model_names_an_onnx_runner_of_its_task() -> None:
    """``--runtime onnx`` runs every task: each model's spec names its task's runner."""
    runners = {gluon_hub.info(name).task: set() for name in gluon_hub.list_models(plugin="cv")}
    for name in gluon_hub.list_models(plugin="cv"):
        spec = gluon_hub.info(name)
        runners[spec.task].add(spec.runner)
    assert runners["object-detection"] == {"gluon_cv_core.detection.onnx_runner:Detector"}
    assert runners["instance-segmentation"] == {"gluon_cv_core.detection.onnx_runner:InstanceSegmenter"}
    assert all(None not in names for names in runners.values()), runners


@pytest.mark.parametrize("model", ["faster_rcnn_resnet50_v1b_voc", "mask_rcnn_resnet50_v1b_coco"])
def test_onnx_runtime_is_refused_for_a_model_without_a_runner(model: str, tmp_path) -> None:
    """A model of a routed task whose spec names no runner (a third party's, say) is refused
    with what to do, before any file is looked at."""
    spec = dataclasses.replace(gluon_hub.info(model), runner=None)
    args = predict.build_parser().parse_args([model, str(tmp_path / "photo.jpg"), "--runtime", "onnx",
                                              "--model-file", "m.onnx"])
    expected = (f"'{spec.qualified_name}' ({spec.task}) names no ONNX runner (its spec's runner), so --runtime "
                "onnx cannot run it: run it without --runtime onnx")
    with pytest.raises(ValueError, match=re.escape(expected)):
        importlib.import_module(f"gluon_cv_core.{predict._TASK_MODULES[spec.task]}").run(args, spec)


def test_model_file_without_the_onnx_runtime_is_refused_before_any_lookup() -> None:
    with pytest.raises(ValueError, match="--model-file is the exported file that --runtime onnx runs"):
        predict.main(["no_such_model", "photo.jpg", "--model-file", "m.onnx"])
