"""C3D ("Learning Spatiotemporal Features with 3D Convolutional Networks", arXiv:1412.0767),
with GluonCV 0.10's parameter layout.

Eight 3x3x3 convolutions (with biases, no normalization) and five max poolings, then three
fully connected layers. ``fc6`` takes exactly 512x1x4x4 = 8192 features, so the clip size is
fixed: 16 frames of 112x112 (the size GluonCV trained and evaluated at).
"""

from __future__ import annotations

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.blocks import HybridBlock, nn
from .layers3d import check_clips

__all__ = ["C3D", "c3d"]

#: (convolution attribute, output channels), with a max pooling after each group
GROUPS = ((("conv1", 64),), (("conv2", 128),), (("conv3a", 256), ("conv3b", 256)),
          (("conv4a", 512), ("conv4b", 512)), (("conv5a", 512), ("conv5b", 512)))


class C3D(HybridBlock):
    """``conv1``-``conv5b`` (each with relu) and ``pool1``-``pool5``, the mean over a sample's
    ``num_segments x num_crop`` clips, ``fc6`` and ``fc7`` (relu, dropout) and ``fc8``.

    Input ``(batch x num_segments x num_crop, 3, 16, 112, 112)``; scores ``(batch, nclass)``,
    or ``fc6``'s 4096 features when ``feat_ext``.
    """

    def __init__(self, nclass: int, dropout_ratio: float = 0.5, num_segments: int = 1, num_crop: int = 1,
                 feat_ext: bool = False, init_std: float = 0.001) -> None:
        super().__init__()
        self.num_segments = num_segments
        self.num_crop = num_crop
        self.feat_ext = feat_ext
        self.feat_dim = 8192
        small = mx.init.Normal(init_std)
        with self.name_scope():
            in_channels = 3
            for group, convs in enumerate(GROUPS):
                for name, channels in convs:
                    setattr(self, name, nn.Conv3D(channels, 3, padding=1, in_channels=in_channels,
                                                  weight_initializer=mx.init.MSRAPrelu()))
                    in_channels = channels
                # the first pooling keeps every frame; the last pads 7x7 maps to give 4x4
                if group == 0:
                    pool = nn.MaxPool3D((1, 2, 2), (1, 2, 2))
                else:
                    pool = nn.MaxPool3D(2, 2, (0, 1, 1) if group == len(GROUPS) - 1 else 0)
                setattr(self, f"pool{group + 1}", pool)
            self.fc6 = nn.Dense(4096, in_units=self.feat_dim, weight_initializer=small)
            self.fc7 = nn.Dense(4096, in_units=4096, weight_initializer=small)
            self.fc8 = nn.Dense(nclass, in_units=4096, weight_initializer=small)
            self.dropout = nn.Dropout(dropout_ratio)
            self.relu = nn.Activation("relu")

    def hybrid_forward(self, F, x):
        for group, convs in enumerate(GROUPS):
            for name, _ in convs:
                x = self.relu(getattr(self, name)(x))
            x = getattr(self, f"pool{group + 1}")(x)
        # segmental consensus: the clips of one video (segments x crops) are consecutive rows
        x = F.reshape(x, shape=(-1, self.num_segments * self.num_crop, self.feat_dim)).mean(axis=1)
        x = self.dropout(self.relu(self.fc6(x)))
        if self.feat_ext:
            return x
        x = self.dropout(self.relu(self.fc7(x)))
        return self.fc8(x)


@head_argument("nclass")
def c3d(nclass: int = 400, num_segments: int = 1, num_crop: int = 1, feat_ext: bool = False,
        dropout_ratio: float = 0.5, init_std: float = 0.001) -> C3D:
    """C3D, trained from scratch on 16-frame 112x112 clips.

    Parameters
    ----------
    nclass : classes scored.
    num_segments, num_crop : clips per video averaged inside the network (consecutive rows).
    feat_ext : return ``fc6``'s features (after relu and dropout) instead of scores.
    dropout_ratio : dropout after ``fc6`` and ``fc7`` in training.
    init_std : standard deviation of the fully connected layers' initial weights.
    """
    check_clips(num_segments, num_crop)
    return C3D(nclass, dropout_ratio, num_segments, num_crop, feat_ext, init_std)
