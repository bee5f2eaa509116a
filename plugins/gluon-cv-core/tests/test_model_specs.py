"""The registry entries of gluon-cv-core say true things about the models they build."""

from __future__ import annotations

import importlib
import subprocess
import sys

import numpy as np
import pytest

import gluon_hub
from gluon_hub.compat import mx

#: the float32 classifiers (the int8 entries, quantized at load, have their own tests)
MODELS = [n for n in gluon_hub.list_models(plugin="cv", task="image-classification")
          if "int8" not in gluon_hub.info(n).tags]


def _symbolic_build(name: str):
    """Our model applied to a symbol: shapes come from inference, nothing is allocated."""
    spec = gluon_hub.info(name)
    module, _, attr = spec.factory.partition(":")
    net = getattr(importlib.import_module(module), attr)(**spec.kwargs)
    out = net(mx.sym.var("data"))
    arg_shapes, out_shapes, _ = out.infer_shape(data=(1, *spec.input.shape))
    return spec, net, dict(zip(out.list_arguments(), arg_shapes)), out_shapes[0]


def test_the_zoo_has_every_family() -> None:
    assert len(MODELS) == 129
    assert {"resnet50_v1d", "mobilenet1.0", "inceptionv3", "cifar_wideresnet40_8", "resnest269", "hrnet_w64_c",
            "senet_154", "nasnet_6_4032", "xception71", "residualattentionnet452", "resnet50_v1d_0.11",
            "resnet101_v1b_gn", "cifar_resnext29_16x64d", "shufflenet_v2", "googlenet", "dla34"} <= set(MODELS)


@pytest.mark.parametrize("name", MODELS)
def test_num_params_and_output_shape_match_the_built_model(name: str) -> None:
    spec, net, shapes, out_shape = _symbolic_build(name)
    learnable = [p.name for p in net.collect_params().values() if p.grad_req != "null"]
    assert sum(int(np.prod(shapes[p])) for p in learnable) == spec.num_params
    assert tuple(out_shape) == (1, *spec.output_shape)


def _published_as() -> dict[str, str]:
    """Models whose weights GluonCV loads from a file named otherwise: ``get_hrnet`` loads
    ``hrnet_<config>_cls`` for ``hrnet_<config>_c``, and the model store lists the pruned
    ResNets (``resnet50_v1d_0.86``) under other stored names."""
    from gluoncv.model_zoo import model_store  # test-only reference

    renamed = {shown: stored for stored, shown in zip(model_store._model_sha1, model_store.pretrained_model_list())
               if shown != stored}
    return renamed | {n: f"{n[:-2]}_cls" for n in MODELS if n.startswith("hrnet_") and n.endswith("_c")}


_PUBLISHED_AS = _published_as()


@pytest.mark.parametrize("name", [n for n in MODELS if gluon_hub.info(n).pretrained])
def test_weights_name_the_file_gluoncv_publishes(name: str) -> None:
    from gluoncv.model_zoo import model_store  # test-only reference

    variant = gluon_hub.info(name).weight()
    published = _PUBLISHED_AS.get(name, name)
    sha1 = model_store._model_sha1[published]
    assert variant.file.hash == f"sha1:{sha1}"
    assert variant.file.filename == f"gluon/models/{published}-{sha1[:8]}.zip"
    assert variant.file.extract == f"{published}-{sha1[:8]}.params"


def test_labels_have_one_name_per_class() -> None:
    seen = set()
    for name in MODELS:
        spec = gluon_hub.info(name)
        if spec.input.labels in seen:
            continue
        seen.add(spec.input.labels)
        module, _, attr = spec.input.labels.partition(":")
        labels = getattr(importlib.import_module(module), attr)
        # ImageNet's short names repeat ("crane" the bird and the machine); synsets do not
        assert len(labels) == spec.input.num_classes and all(labels)
    assert seen == {"gluon_cv_core.classification.labels:IMAGENET1K_LABELS", "gluon_cv_core.classification.labels:CIFAR10_LABELS"}
    from gluon_cv_core.classification.labels import IMAGENET1K_SYNSETS

    assert len(set(IMAGENET1K_SYNSETS)) == 1000


def test_listing_imports_neither_mxnet_nor_model_code() -> None:
    code = (
        "import sys, gluon_hub\n"
        "names = [n for n in gluon_hub.list_models(plugin='cv', task='image-classification')\n"
        "         if 'int8' not in gluon_hub.info(n).tags]\n"
        "gluon_hub.info('resnet50_v1d')\n"
        "heavy = [m for m in sys.modules if m == 'mxnet' or '.models' in m or '.backbones' in m]\n"
        "print(len(names), heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split(None, 1) == [str(len(MODELS)), "[]\n"]


def test_factories_refuse_unknown_depths_and_variants() -> None:
    from gluon_cv_core.classification.models import cifar
    from gluon_cv_core.common.backbones import resnet, resnetv1b

    with pytest.raises(ValueError, match="num_layers must be one of"):
        resnet.resnet_v1(42)
    with pytest.raises(ValueError, match="variant must be one of"):
        resnetv1b.resnet_v1b(50, "z")
    with pytest.raises(ValueError, match="6"):
        cifar.cifar_resnet_v1(21)
