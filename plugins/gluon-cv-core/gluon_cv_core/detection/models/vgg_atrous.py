"""VGG-16 with atrous fc6/fc7 and SSD's extra layers (SSD, arXiv:1512.02325, section 3).

This backbone exists only for detection (ImageNet-pretrained as GluonCV's ``vgg16_atrous``),
so it lives here and not among the classification models. Its input is scaled back to
0-255 pixels by a stored constant, as Caffe's VGG expects; ``conv4_3`` is L2-normalized
with a learned per-channel scale (ParseNet, arXiv:1506.04579).
"""

from __future__ import annotations

from typing import Any

from gluon_hub.compat import mx
from gluon_hub.specs import FileRef

nn = mx.gluon.nn

#: convolutions per stage and their widths (VGG-16)
_STAGES = ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512])
#: input size -> extra stages, each a list of (filters, kernel, stride, padding)
EXTRAS = {
    300: [[(256, 1, 1, 0), (512, 3, 2, 1)], [(128, 1, 1, 0), (256, 3, 2, 1)],
          [(128, 1, 1, 0), (256, 3, 1, 0)], [(128, 1, 1, 0), (256, 3, 1, 0)]],
    512: [[(256, 1, 1, 0), (512, 3, 2, 1)], [(128, 1, 1, 0), (256, 3, 2, 1)],
          [(128, 1, 1, 0), (256, 3, 2, 1)], [(128, 1, 1, 0), (256, 3, 2, 1)],
          [(128, 1, 1, 0), (256, 4, 1, 1)]],
}
#: GluonCV's ImageNet weights of this backbone (gluoncv/model_zoo/model_store.py)
IMAGENET_WEIGHTS = FileRef(hash="sha1:4fa2e1ad96b8c8d1ba9e5a43556cd909d70b3985",
                           filename="gluon/models/vgg16_atrous-4fa2e1ad.zip",
                           extract="vgg16_atrous-4fa2e1ad.params")

_CONV_INIT = dict(weight_initializer=mx.init.Xavier(rnd_type="gaussian", factor_type="out", magnitude=2),
                  bias_initializer="zeros")


class L2Normalize(mx.gluon.HybridBlock):
    """Channel-wise L2 normalization times a learned per-channel scale."""

    def __init__(self, channels: int, initial: float, eps: float = 1e-5) -> None:
        super().__init__()
        self._eps = eps
        with self.name_scope():
            self.scale = self.params.get("normalize_scale", shape=(1, channels, 1, 1),
                                         init=mx.init.Constant(initial))

    def hybrid_forward(self, F, x, scale):
        return F.broadcast_mul(F.L2Normalization(x, mode="channel", eps=self._eps), scale)


def _conv_relu(seq: Any, filters: int, kernel: int, strides: int = 1, padding: int = 0,
               dilation: int = 1) -> None:
    seq.add(nn.Conv2D(filters, kernel, strides, padding, dilation=dilation, **_CONV_INIT))
    seq.add(nn.Activation("relu"))


class VGGAtrousFeatures(mx.gluon.HybridBlock):
    """The SSD feature maps of VGG-16-atrous: conv4_3 (normalized), fc7 and the extras."""

    def __init__(self, size: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            # ImageNet std * 255: inputs normalized by mean/std become mean-subtracted pixels
            scale = mx.nd.array([0.229, 0.224, 0.225]).reshape((1, 3, 1, 1)) * 255
            self.init_scale = self.params.get_constant("init_scale", scale)
            self.stages = nn.HybridSequential()
            for repeat, filters in zip(*_STAGES):
                stage = nn.HybridSequential(prefix="")
                with stage.name_scope():
                    for _ in range(repeat):
                        _conv_relu(stage, filters, 3, padding=1)
                self.stages.add(stage)
            fc = nn.HybridSequential(prefix="dilated_")
            with fc.name_scope():
                _conv_relu(fc, 1024, 3, padding=6, dilation=6)
                _conv_relu(fc, 1024, 1)
            self.stages.add(fc)
            self.norm4 = L2Normalize(_STAGES[1][3], 20)
            self.extras = nn.HybridSequential()
            for i, config in enumerate(EXTRAS[size]):
                extra = nn.HybridSequential(prefix=f"extra{i}_")
                with extra.name_scope():
                    for filters, kernel, strides, padding in config:
                        _conv_relu(extra, filters, kernel, strides, padding)
                self.extras.add(extra)

    def hybrid_forward(self, F, x, init_scale):
        def pool(y, kernel=2, stride=2, pad=0):
            return F.Pooling(y, pool_type="max", kernel=(kernel, kernel), stride=(stride, stride),
                             pad=(pad, pad), pooling_convention="full")

        x = F.broadcast_mul(x, init_scale)
        for stage in self.stages[:3]:
            x = pool(stage(x))
        x = self.stages[3](x)
        outputs = [self.norm4(x)]
        x = self.stages[5](pool(self.stages[4](pool(x)), 3, 1, 1))
        outputs.append(x)
        for extra in self.extras:
            x = extra(x)
            outputs.append(x)
        return outputs


def vgg16_atrous_features(size: int, pretrained: bool | str = False) -> VGGAtrousFeatures:
    """The extractor for ``size`` 300 or 512, with GluonCV's ImageNet weights when ``pretrained``."""
    if size not in EXTRAS:
        raise ValueError(f"VGG-16-atrous SSD is defined for input sizes {sorted(EXTRAS)}, got {size}")
    net = VGGAtrousFeatures(size)
    if pretrained:
        from gluon_hub.cache import fetch_params

        # the ImageNet file has no extras: they stay for ``initialize`` to fill
        net.load_parameters(str(fetch_params(IMAGENET_WEIGHTS)), allow_missing=True)
    return net
