"""Multi-scale and flipped evaluation equals GluonCV's ``MultiEvalModel`` on the same network."""

from __future__ import annotations

import numpy as np
import pytest

from gluon_cv_core.segmentation.multiscale import MultiScaleEvaluator, first_output, main_prediction, window_starts
from gluon_hub.compat import mx

import gluoncv  # noqa: F401  (test-only reference; after the compat shim)
from gluoncv.model_zoo.segbase import MultiEvalModel

CLASSES = 5


class TinySegmenter(mx.gluon.HybridBlock):
    """Two convolutions (one strided) and a bilinear upsampling: a segmentation network both sides run.

    ``evaluate``, ``base_size`` and ``crop_size`` are what GluonCV's ``MultiEvalModel`` asks of a model;
    the second output stands for an auxiliary head, which evaluation must ignore.
    """

    def __init__(self, base_size: int, crop_size: int) -> None:
        super().__init__()
        self.base_size, self.crop_size = base_size, crop_size
        with self.name_scope():
            self.conv1 = mx.gluon.nn.Conv2D(8, 3, strides=2, padding=1, in_channels=3, activation="relu")
            self.conv2 = mx.gluon.nn.Conv2D(CLASSES, 3, padding=1, in_channels=8)

    def hybrid_forward(self, F, x):  # noqa: N803 (Gluon's signature)
        scores = F.contrib.BilinearResize2D(self.conv2(self.conv1(x)), like=x, mode="like")
        return scores, -scores

    def evaluate(self, x):
        return self.forward(x)[0]


def _net(base_size: int, crop_size: int, hybridize: bool) -> TinySegmenter:
    net = TinySegmenter(base_size, crop_size)
    net.initialize(mx.init.Normal(0.5))
    mx.random.seed(0)
    for param in net.collect_params().values():
        param.set_data(mx.nd.random.normal(0, 0.4, shape=param.shape))
    if hybridize:
        net.hybridize()
    return net


@pytest.mark.parametrize("shape, flip, hybridize", [
    ((30, 47), True, False),   # wide; scales where the image fits one window, one side does, neither does
    ((53, 22), True, True),    # tall, hybridized
    ((40, 40), False, False),  # square, without flipping
])
def test_scores_equal_gluoncv_multi_eval_model(shape, flip, hybridize) -> None:
    base_size, crop_size, scales = 36, 24, (0.5, 0.75, 1.0, 1.5, 1.75)
    net = _net(base_size, crop_size, hybridize)
    image = mx.nd.array(np.random.RandomState(1).normal(size=(3, *shape)).astype("float32"))
    expected = MultiEvalModel(net, CLASSES, [mx.cpu()], flip=flip, scales=list(scales))(image).asnumpy()
    actual = MultiScaleEvaluator(net, CLASSES, scales=scales, flip=flip)(image)
    assert actual.shape == (1, CLASSES, *shape)
    np.testing.assert_allclose(actual.asnumpy(), expected, rtol=2e-5, atol=1e-6)
    assert (MultiScaleEvaluator(net, CLASSES, scales=scales, flip=flip).predict(image).asnumpy()
            == expected[0].argmax(axis=0)).mean() > 0.999


class AuxSegmenter(mx.gluon.HybridBlock):
    """A head and an auxiliary head with its own convolution, like FCN's on stage 3."""

    def __init__(self) -> None:
        super().__init__()
        with self.name_scope():
            self.stem = mx.gluon.nn.Conv2D(8, 3, padding=1, in_channels=3, activation="relu")
            self.head = mx.gluon.nn.Conv2D(CLASSES, 1, in_channels=8)
            self.auxlayer = mx.gluon.nn.Conv2D(CLASSES, 3, padding=1, in_channels=8)

    def hybrid_forward(self, F, x):  # noqa: N803 (Gluon's signature)
        features = self.stem(x)
        return self.head(features), self.auxlayer(features)


@pytest.mark.parametrize("hybridize", [False, True])
def test_main_prediction_leaves_the_auxiliary_head_out(hybridize) -> None:
    net = AuxSegmenter()
    net.initialize(mx.init.Normal(0.5))
    if hybridize:
        net.hybridize()
    x = mx.nd.array(np.random.RandomState(2).normal(size=(1, 3, 12, 10)).astype("float32"))
    predict = main_prediction(net)
    np.testing.assert_array_equal(predict(x).asnumpy(), first_output(net(x)).asnumpy())
    graph_inputs = set(predict._cached_graph[1].list_inputs())
    assert net.head.weight.name in graph_inputs
    assert net.auxlayer.weight.name not in graph_inputs
    # the parameters are shared: a change to the network is seen
    net.head.weight.set_data(net.head.weight.data() * 2)
    np.testing.assert_allclose(predict(x).asnumpy(), first_output(net(x)).asnumpy(), rtol=1e-6)
    # a network with one output is called as it is
    single = mx.gluon.nn.Conv2D(CLASSES, 1, in_channels=3)
    single.initialize()
    np.testing.assert_array_equal(main_prediction(single)(x).asnumpy(), single(x).asnumpy())


def test_main_prediction_keeps_an_optimized_networks_fused_graph() -> None:
    import gluon_hub

    net = AuxSegmenter()
    net.initialize(mx.init.Normal(0.5))
    x = mx.nd.array(np.random.RandomState(3).normal(size=(1, 3, 12, 10)).astype("float32"))
    gluon_hub.optimize(net, x)
    calls = []
    net.register_forward_hook(lambda block, inputs, outputs: calls.append(inputs[0].shape))
    np.testing.assert_array_equal(main_prediction(net)(x).asnumpy(), net(x)[0].asnumpy())
    assert calls == [x.shape, x.shape]  # both went through the optimized network itself


def test_default_scales_are_gluoncvs() -> None:
    net = _net(36, 24, False)
    assert MultiScaleEvaluator(net, CLASSES).scales == tuple(MultiEvalModel(net, CLASSES, [mx.cpu()]).scales)


def test_windows_cover_the_side_and_bad_settings_are_refused() -> None:
    assert window_starts(24, 24, 16) == [0]
    assert window_starts(41, 24, 16) == [0, 16, 32]  # the last window overhangs and is padded
    with pytest.raises(ValueError, match="pad it first"):
        window_starts(10, 24, 16)
    net = mx.gluon.nn.Conv2D(CLASSES, 1, in_channels=3)
    with pytest.raises(ValueError, match="base_size= and crop_size="):
        MultiScaleEvaluator(net, CLASSES)
    with pytest.raises(ValueError, match="scales"):
        MultiScaleEvaluator(net, CLASSES, 36, 24, scales=(1.0, 0.0))
    net.initialize()
    with pytest.raises(ValueError, match=r"shape \(3, H, W\)"):
        MultiScaleEvaluator(net, CLASSES, 36, 24)(mx.nd.zeros((2, 3, 8, 8)))
