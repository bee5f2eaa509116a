"""Fine-tuning starts from GluonCV's Kinetics-400 weights (``use_kinetics_pretrain``): what is
copied, what is fetched, and what is refused."""

from __future__ import annotations

import numpy as np
import pytest
from cv_testlib.detection import build_ours, empty_mirror

from gluon_cv_core.action.models.kinetics_start import copy_parameters
from gluon_hub.compat import mx


def _initialized(name: str, **kwargs):
    net = build_ours(name, **kwargs)
    net.initialize(mx.init.Normal(0.5))
    net(mx.nd.zeros((1, 3, 32, 32)))
    return net


def test_every_parameter_but_the_classifier_is_copied() -> None:
    source = _initialized("resnet18_v1b_kinetics400")
    net = build_ours("resnet18_v1b_custom", nclass=5)
    copy_parameters(net, source, skip=("output.",))
    assert net(mx.nd.ones((2, 3, 32, 32))).shape == (2, 5)  # shapes deferred until now are inferred
    theirs, ours = source._collect_params_with_prefix(), net._collect_params_with_prefix()
    for key, param in ours.items():
        if key.startswith("output."):
            assert param.shape[0] == 5  # the new classes keep their fresh initialisation
        else:
            np.testing.assert_array_equal(param.data().asnumpy(), theirs[key].data().asnumpy(), err_msg=key)


def test_a_source_of_another_structure_is_refused_naming_a_parameter() -> None:
    with pytest.raises(ValueError, match=r"'layer1.0.conv1.weight' is \(64, 0, 3, 3\) here and \(64, 64, 1, 1\)"):
        copy_parameters(build_ours("resnet18_v1b_custom"), _initialized("resnet50_v1b_kinetics400"),
                        skip=("output.",))
    with pytest.raises(ValueError, match="no parameter 'layer1.2.*structures differ"):
        copy_parameters(build_ours("resnet34_v1b_kinetics400"), _initialized("resnet18_v1b_kinetics400"),
                        skip=("output.",))


def test_the_custom_tsn_fetches_its_backbones_kinetics_file(monkeypatch, tmp_path) -> None:
    from gluon_hub.cache import DownloadError

    # the mirror has no files: the build asks for GluonCV's Kinetics-400 ResNet-18 TSN weights
    with empty_mirror(monkeypatch, tmp_path) as asked, pytest.raises(DownloadError):
        build_ours("resnet18_v1b_custom", nclass=10, use_kinetics_pretrain=True)
    assert [path.rsplit("/", 1)[-1] for path in asked] == ["resnet18_v1b_kinetics400-46d5a985.zip"]


@pytest.mark.parametrize("kwargs, message", [
    ({"backbone": "vgg16"}, "no vgg16_kinetics400 weights; backbones with them: inceptionv1, inceptionv3, resnet18"),
    ({"pretrained_base": True}, "either pretrained_base or use_kinetics_pretrain"),
])
def test_an_impossible_start_is_refused_before_any_download(monkeypatch, tmp_path, kwargs, message) -> None:
    with empty_mirror(monkeypatch, tmp_path) as asked, pytest.raises(ValueError, match=message):
        build_ours("resnet18_v1b_custom", use_kinetics_pretrain=True, **kwargs)
    assert asked == []
