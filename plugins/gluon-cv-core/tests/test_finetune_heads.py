"""``gluon_hub.load(name, pretrained=True, <class count>=...)`` for every task whose head
depends on the class count: the published file (random weights in GluonCV's format, served
from a loopback mirror) fills every parameter but the head, which has the new shape.

A published file is a randomly initialised zoo model's parameters in GluonCV's format (a zip
named ``<name>-<sha1[:8]>.zip`` holding the ``.params``), registered with the zoo spec as its
weights: in this process (:func:`register`) or as an installed distribution that a subprocess
finds through its entry point (:func:`install_plugin`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import textwrap
import types
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gluon_hub
from gluon_hub import FileRef, hookimpl
from gluon_hub.compat import mx
from gluon_hub.publishing import serve

#: the plugin that provides the models with published-format random weights
PLUGIN = "published"


def publish_random(name: str, mirror: Path, input_shape: tuple[int, ...] | None = None, seed: int = 0
                   ) -> tuple[Any, dict[str, Any]]:
    """The zoo model ``name`` at random, its parameters written into ``mirror`` in GluonCV's
    published format; returns the spec (now with that file as its weights) and the saved arrays."""
    spec = gluon_hub.info(f"cv/{name}")
    variant = spec.weights[0]
    net = gluon_hub.load(spec.qualified_name, **variant.kwargs)
    mx.random.seed(seed)
    net.initialize(mx.init.Xavier(), force_reinit=True)
    net(mx.nd.zeros((1, *(input_shape or spec.input.shape))))  # shapes the deferred parameters
    folder = mirror / "gluon" / "models"
    folder.mkdir(parents=True, exist_ok=True)
    plain = folder / f"{name}.params"
    net.save_parameters(str(plain))
    sha1 = hashlib.sha1(plain.read_bytes()).hexdigest()
    stem = f"{name}-{sha1[:8]}"
    with zipfile.ZipFile(folder / f"{stem}.zip", "w") as archive:
        archive.write(plain, f"{stem}.params")
    saved = {k: v.asnumpy() for k, v in mx.nd.load(str(plain)).items()}
    plain.unlink()
    file = FileRef(hash=f"sha1:{sha1}", filename=f"gluon/models/{stem}.zip", extract=f"{stem}.params")
    return dataclasses.replace(spec, plugin="", weights=(dataclasses.replace(variant, file=file),)), saved


def register(spec: Any) -> str:
    """Register ``spec`` in this process under the plugin ``published``; returns its qualified name."""
    plugin = types.SimpleNamespace(GLUON_HUB_API=">=1,<2", gluon_hub_models=hookimpl(lambda: [spec]))
    gluon_hub.register_plugin(plugin, PLUGIN)
    return f"{PLUGIN}/{spec.name}"


def install_plugin(site: Path, specs: list[Any]) -> None:
    """A distribution in ``site`` (put it on PYTHONPATH) whose plugin ``published`` provides ``specs``."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "published_specs.json").write_text(json.dumps([s.to_dict() for s in specs]))
    (site / "published_plugin.py").write_text(textwrap.dedent('''
        import json
        from pathlib import Path

        from gluon_hub import ModelSpec, hookimpl

        GLUON_HUB_API = ">=1,<2"


        @hookimpl
        def gluon_hub_models():
            rows = json.loads((Path(__file__).parent / "published_specs.json").read_text())
            return [ModelSpec.from_dict(row) for row in rows]
    '''))
    info = site / "published_weights-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: published-weights\nVersion: 1.0\n"
                                   "Requires-Dist: gluon-hub~=0.1\n")
    (info / "entry_points.txt").write_text(f"[gluon_hub]\n{PLUGIN} = published_plugin\n")


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    """The folder a loopback mirror serves, the cache's only source."""
    folder = tmp_path / "mirror"
    folder.mkdir()
    monkeypatch.setenv("GLUON_HUB_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("GLUON_HUB_OFFLINE", raising=False)
    with serve(folder) as server:
        monkeypatch.setenv("GLUON_HUB_MIRRORS", server.url)
        yield folder
    with contextlib.suppress(gluon_hub.PluginError):
        gluon_hub.unregister_plugin("published")


def _params(net):
    return {k: p for k, p in net._collect_params_with_prefix().items()}


def _assert_all_but(net, saved, left_out):
    """Every parameter outside ``left_out`` holds the file's values."""
    params = _params(net)
    assert set(params) == set(saved)
    for key, value in saved.items():
        if key not in left_out:
            np.testing.assert_array_equal(params[key].data().asnumpy(), value, err_msg=key)


#: model, published class count argument and new value, the head's parameters, input for shapes
CASES = [
    ("mobilenet0.25", "classes", 2, {"output.weight", "output.bias"}, None),
    ("fastscnn_citys", "classes", ["road", "sky", "person"],
     {"classifier.conv.weight", "classifier.conv.bias", "auxlayer.block.4.weight", "auxlayer.block.4.bias"},
     (3, 64, 64)),
    ("inceptionv1_kinetics400", "nclass", 5, {"output.weight", "output.bias"}, None),
    ("mobile_pose_mobilenet1.0", "num_joints", 4, {"upsampling.4.weight"}, None),
]


@pytest.mark.parametrize("name, argument, value, head, shape", CASES, ids=[c[0] for c in CASES])
def test_every_parameter_but_the_head_comes_from_the_file(mirror, name, argument, value, head, shape):
    spec, saved = publish_random(name, mirror, shape)
    qualified = register(spec)
    with pytest.warns(gluon_hub.NewHeadWarning, match="left at their initialisation") as caught:
        net = gluon_hub.load(qualified, pretrained=True, **{argument: value})
    report = net.gluon_hub_new_head
    assert set(report.reinitialized) == head, report
    assert report.argument == argument and report.requested == value
    assert all(key in str(caught[0].message) for key in head)
    _assert_all_but(net, saved, head)
    count = value if isinstance(value, int) else len(value)
    net(mx.nd.zeros((1, *(shape or spec.input.shape))))  # the new head's deferred shapes
    for key in head:
        new_shape = _params(net)[key].shape
        assert new_shape[0] == count and saved[key].shape[0] != count, (key, new_shape)


def test_the_published_class_count_loads_strictly(mirror):
    spec, saved = publish_random("mobilenet0.25", mirror)
    net = gluon_hub.load(register(spec), pretrained=True, classes=1000)  # the published count: no new head
    assert not hasattr(net, "gluon_hub_new_head")
    _assert_all_but(net, saved, set())


def test_a_misfit_the_class_count_does_not_explain_stays_an_error(mirror):
    spec, _ = publish_random("mobilenet0.25", mirror)
    qualified = register(spec)
    with pytest.raises(gluon_hub.ModelBuildError, match=r"expects shape .* \(not a difference in classes alone\)"):
        gluon_hub.load(qualified, pretrained=True, classes=2, multiplier=0.5)
    with pytest.raises(gluon_hub.ModelBuildError, match="expects shape"):
        gluon_hub.load(qualified, pretrained=True, multiplier=0.5)  # no class change: today's error


def test_a_detector_keeps_the_rows_of_classes_that_keep_their_name(mirror):
    """GluonCV's reset_class: 'person' and 'dog' keep their VOC predictor rows, 'kangaroo' starts fresh."""
    spec, saved = publish_random("ssd_512_mobilenet1.0_voc", mirror)
    with pytest.warns(gluon_hub.NewHeadWarning, match="rows kept for the classes person, dog"):
        net = gluon_hub.load(register(spec), pretrained=True, classes=["person", "kangaroo", "dog"])
    report = net.gluon_hub_new_head
    assert report.kept == ("person", "dog")
    predictors = {k for k in saved if k.startswith("class_predictors.")}
    assert set(report.reinitialized) == predictors
    assert net.classes == ("person", "kangaroo", "dog")
    _assert_all_but(net, saved, predictors)
    voc = list(gluon_hub.info("cv/ssd_512_mobilenet1.0_voc").class_names(20))
    old_n, new_n = 21, 4
    for key in predictors:
        old, new = saved[key], _params(net)[key].data().asnumpy()
        assert new.shape[0] == old.shape[0] // old_n * new_n
        np.testing.assert_array_equal(new[0::new_n], old[0::old_n])  # background
        for new_index, name in ((1, "person"), (3, "dog")):
            np.testing.assert_array_equal(new[new_index::new_n], old[voc.index(name) + 1::old_n])
        if key.endswith("weight"):  # 'kangaroo' starts from the initializer (biases start at zero)
            assert not np.array_equal(new[2::new_n], old[voc.index("cat") + 1::old_n])
    boxes = net(mx.nd.zeros((1, 3, 512, 512)))
    assert boxes[0].shape[-1] == 1


def _folder(root: Path) -> Path:
    """Two colour classes (``blue``, ``red``), 4 training and 2 validation images each."""
    from PIL import Image

    rng = np.random.default_rng(0)
    for segment, count in (("train", 4), ("val", 2)):
        for name, colour in (("blue", (40, 40, 200)), ("red", (200, 40, 40))):
            (root / segment / name).mkdir(parents=True)
            for i in range(count):
                pixels = np.clip(np.array(colour) + rng.normal(0, 30, (32, 32, 3)), 0, 255).astype(np.uint8)
                Image.fromarray(pixels).save(root / segment / name / f"{i}.png")
    return root


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=600)


def test_train_pretrained_on_two_classes_then_predict_their_names(mirror, tmp_path):
    """The training script starts from the published file with a new 2-class head (real process,
    loopback mirror), writes labels.txt, and ``gluon-hub predict --params`` prints those names."""
    spec, saved = publish_random("cifar_resnet20_v1", mirror)  # a 10-class file
    install_plugin(tmp_path / "site", [spec])
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site"), "OMP_NUM_THREADS": "1"}
    data, out = _folder(tmp_path / "colours"), tmp_path / "out"
    train = _run(["-m", "gluon_cv_core.classification.train", "--model", "published/cifar_resnet20_v1", "--pretrained",
                  "--classes", "2", "--data-dir", str(data), "--batch-size", "4", "-j", "0", "--num-epochs", "1",
                  "--lr", "1e-9", "--log-interval", "0", "--save-dir", str(out)], env)
    assert train.returncode == 0, train.stderr
    assert "NewHeadWarning" in train.stderr and "output.weight" in train.stderr
    assert (out / "labels.txt").read_text() == "blue\nred\n"
    trained = {k: v.asnumpy() for k, v in mx.nd.load(str(out / "cifar_resnet20_v1-0001.params")).items()}
    assert trained["output.weight"].shape[0] == 2 and saved["output.weight"].shape[0] == 10
    convs = [k for k in saved if k.endswith("conv.weight") or ("body" in k and k.endswith("weight"))]
    assert convs
    for key in convs:  # lr 1e-9: the trained network still holds the published values
        np.testing.assert_allclose(trained[key], saved[key], rtol=1e-4, atol=1e-6, err_msg=key)

    image = str(next((data / "val" / "red").iterdir()))
    params = str(out / "cifar_resnet20_v1-0001.params")
    for names in (["--classes-file", str(out / "labels.txt")], ["--classes", "blue,red"]):
        shown = _run(["-m", "gluon_hub", "predict", "published/cifar_resnet20_v1", image, "--params", params,
                      *names, "--json"], env)
        assert shown.returncode == 0, shown.stderr
        assert sorted(t["label"] for t in json.loads(shown.stdout)["top"]) == ["blue", "red"]
    forgot = _run(["-m", "gluon_hub", "predict", "published/cifar_resnet20_v1", image, "--params", params], env)
    assert forgot.returncode == 1 and not forgot.stdout
    assert "pass --classes a,b,c or --classes-file labels.txt" in forgot.stderr, forgot.stderr
    assert "bug" not in forgot.stderr and "Traceback" not in forgot.stderr


def test_the_segmentation_scripts_start_from_published_weights_on_other_classes(mirror, tmp_path):
    """``train_segmentation --pretrained`` on VOC data (21 classes) from a Cityscapes file (19):
    the scripts' network keeps every published parameter but the class heads."""
    import argparse

    from gluon_cv_core.common.training import Checkpoints
    from gluon_cv_core.segmentation._script import build_segmenter
    from gluon_cv_core.segmentation.classes import VOC_CLASSES

    spec, saved = publish_random("fastscnn_citys", mirror, (3, 64, 64))
    args = argparse.Namespace(model=register(spec), pretrained=True, aux=None)
    with pytest.warns(gluon_hub.NewHeadWarning):
        net = build_segmenter(args, VOC_CLASSES, [mx.cpu()])
    assert net.nclass == 21
    head = set(net.gluon_hub_new_head.reinitialized)
    assert "classifier.conv.weight" in head
    _assert_all_but(net, saved, head)
    Checkpoints(str(tmp_path / "out"), args.model).save(net, 0)  # the bare name, not a folder per plugin
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["fastscnn_citys-0001.params"]
