"""``gluon-hub predict`` is a router: every task the plugin registers models for has its own
predict module with ``run(args, spec)``, and the router treats none of them specially."""

from __future__ import annotations

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


@pytest.mark.parametrize("model", ["faster_rcnn_resnet50_v1b_voc", "mask_rcnn_resnet50_v1b_coco"])
def test_onnx_runtime_is_refused_for_a_model_without_a_runner_naming_its_task(model: str, tmp_path) -> None:
    spec = gluon_hub.info(model)
    assert spec.runner is None
    expected = (f"--runtime onnx runs image classifiers, detectors (SSD, YOLOv3, CenterNet), semantic "
                f"segmentation, pose estimators, action recognisers, depth models and trackers; "
                f"'{spec.qualified_name}' is a model for {spec.task}")
    with pytest.raises(ValueError, match=re.escape(expected)):
        predict.main([model, str(tmp_path / "photo.jpg"), "--runtime", "onnx", "--model-file", "m.onnx"])


def test_model_file_without_the_onnx_runtime_is_refused_before_any_lookup() -> None:
    with pytest.raises(ValueError, match="--model-file is the exported file that --runtime onnx runs"):
        predict.main(["no_such_model", "photo.jpg", "--model-file", "m.onnx"])
