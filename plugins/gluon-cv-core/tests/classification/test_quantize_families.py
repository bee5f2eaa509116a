"""gluon_hub.quantize with default arguments succeeds for one model of every
image-classification family: the int8 graph runs, and the layers that stayed float32 are
recorded on the result (MobileNetV3's and residual attention's elemwise multiplications,
which MXNet 1.9.1 cannot run in int8 on a ReLU's uint8 output, are kept in float32 by
themselves).

Random weights, one calibration batch of one image, at the smallest input each network
takes (224 or 299 pixels where a fixed pooling or dense layer needs it). About 4 minutes
on two CPU cores; senet_154 (115M parameters) and the 224-pixel networks take most of it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import gluon_hub
from gluon_hub.compat import mx
from gluon_hub_deploy._quantize import AUTO_FLOAT32_OPERATORS, int8_operators

# Calibrating and running some 35 int8 models: minutes of arithmetic that does not depend on
# the Python version, so .ci/run's 3.10 and 3.12 legs leave it to the 3.11 run.
pytestmark = pytest.mark.slow

#: One model per family (the smallest), and the input size it is quantized at.
FAMILIES = {
    "alexnet": 64, "cifar_residualattentionnet56": 32, "cifar_resnet20_v1": 32,
    "cifar_resnet20_v2": 32, "cifar_resnext29_32x4d": 32, "cifar_wideresnet16_10": 32,
    "darknet53": 64, "densenet121": 224, "dla34": 64, "googlenet": 224,
    "hrnet_w18_small_v1_c": 64, "inceptionv3": 299, "mobilenet0.25": 64,
    "mobilenetv2_0.25": 64, "mobilenetv3_large": 64, "mobilenetv3_small": 64,
    "nasnet_4_1056": 64, "residualattentionnet56": 224, "resnest14": 64, "resnet18_v1": 64,
    "resnet18_v1b": 64, "resnet50_v1d_0.11": 64, "resnet18_v2": 64, "resnet50_v1b_gn": 64,
    "resnext50_32x4d": 64, "se_resnet18_v1": 64, "se_resnet18_v2": 64,
    "se_resnext50_32x4d": 64, "senet_154": 64, "shufflenet_v1": 64, "shufflenet_v2": 64,
    "squeezenet1.0": 224, "vgg11": 64, "vgg11_bn": 64, "xception": 64,
}
#: Families whose graphs multiply two activations (elemwise_mul).
MULTIPLYING = {"mobilenetv3_large", "mobilenetv3_small", "cifar_residualattentionnet56",
               "residualattentionnet56"}


def test_every_classification_family_has_a_representative():
    # a new family (a new factory module) needs a line in FAMILIES
    modules = {gluon_hub.info(name).factory.split(":")[0] for name in FAMILIES}
    every = {gluon_hub.info(name).factory.split(":")[0]
             for name in gluon_hub.list_models(plugin="cv")
             if gluon_hub.info(name).task == "image-classification" and not name.endswith("_int8")}
    assert every <= modules, sorted(every - modules)


def _nodes(block):
    return json.loads(block._cached_graph[1].tojson())["nodes"]


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_quantize_with_defaults_runs_and_records_the_float32_layers(name):
    size = FAMILIES[name]
    net = gluon_hub.load(name)
    x = np.random.default_rng(0).random((1, 3, size, size), dtype=np.float32)
    int8 = gluon_hub.quantize(net, calib_data=[x])
    # quantize ran the graph once; the second and third runs are where MXNet 1.9.1's fused
    # dense layer met a pooled input in oneDNN's blocked layout (SE-ResNeXt, SENet-154)
    int8(mx.nd.array(x)).asnumpy()
    out = int8(mx.nd.array(x)).asnumpy()
    assert out.shape == (1, gluon_hub.info(name).output_shape[0]) and np.isfinite(out).all()
    assert "_sg_mkldnn_conv" in int8_operators(int8)  # convolutions really run in int8

    kept = int8.gluon_hub_float32_layers
    assert isinstance(kept, dict) and all(isinstance(why, str) and why for why in kept.values())
    nodes = _nodes(int8)
    names = {n["name"] for n in nodes} | {inner["name"] for n in nodes for g in n.get("subgraphs", ())
                                           for inner in g["nodes"]}
    assert set(kept) <= names  # each one is a layer of the int8 graph
    muls = {n["name"] for n in nodes if n["op"] == "elemwise_mul"}
    assert not any(n["op"] == "_contrib_quantized_elemwise_mul" for n in nodes)
    assert {k for k, why in kept.items() if why == AUTO_FLOAT32_OPERATORS["elemwise_mul"]} == muls
    assert bool(muls) == (name in MULTIPLYING)
