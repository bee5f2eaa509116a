"""CycleGAN networks (Zhu et al., 2017): the ResNet generator and the 70x70 PatchGAN.

The layer plan follows the paper's appendix and the authors' reference implementation:
instance normalisation without learned scale or shift (so the convolutions keep their
biases), reflection padding in the generator, LeakyReLU(0.2) in the discriminator. With
``ngf=64`` and 9 blocks the generator has 11,378,179 parameters; the discriminator with
``ndf=64`` has 2,764,737.
"""

from __future__ import annotations

from gluon_hub.compat import mx

nn = mx.gluon.nn

__all__ = [
    "InstanceNorm",
    "ResnetBlock",
    "ResnetGenerator",
    "PatchDiscriminator",
    "cyclegan_resnet_generator",
    "patchgan_discriminator",
]


class InstanceNorm(nn.HybridBlock):
    """Instance normalisation with no parameters (``affine=False`` in the paper's code).

    Gluon's ``nn.InstanceNorm`` always creates gamma and beta; CycleGAN has none, and the
    published parameter counts (and weight files) depend on that.
    """

    def __init__(self, epsilon: float = 1e-5, **kwargs) -> None:
        super().__init__(**kwargs)
        self._epsilon = epsilon

    def hybrid_forward(self, F, x):
        mean = F.mean(x, axis=(2, 3), keepdims=True)
        centered = F.broadcast_sub(x, mean)
        var = F.mean(F.square(centered), axis=(2, 3), keepdims=True)
        return F.broadcast_div(centered, F.sqrt(var + self._epsilon))


class ReflectionPad(nn.HybridBlock):
    """Reflection padding of the two spatial axes of an NCHW batch."""

    def __init__(self, pad: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self._pad_width = (0, 0, 0, 0, pad, pad, pad, pad)

    def hybrid_forward(self, F, x):
        return F.pad(x, mode="reflect", pad_width=self._pad_width)


class ResnetBlock(nn.HybridBlock):
    """Two reflection-padded 3x3 convolutions with a residual connection."""

    def __init__(self, channels: int, **kwargs) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.body = nn.HybridSequential(prefix="")
            self.body.add(
                ReflectionPad(1),
                nn.Conv2D(channels, 3, in_channels=channels),
                InstanceNorm(),
                nn.Activation("relu"),
                ReflectionPad(1),
                nn.Conv2D(channels, 3, in_channels=channels),
                InstanceNorm(),
            )

    def hybrid_forward(self, F, x):
        return x + self.body(x)


class ResnetGenerator(nn.HybridBlock):
    """c7s1-ngf, two stride-2 downsamplings, ``n_blocks`` residual blocks, two
    upsamplings and c7s1-3 with tanh; images keep their size (a multiple of 4)."""

    def __init__(
        self, in_channels: int = 3, out_channels: int = 3, ngf: int = 64, n_blocks: int = 9,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        if n_blocks < 1 or ngf < 1:
            raise ValueError(f"ngf and n_blocks must be positive, got ngf={ngf}, n_blocks={n_blocks}")
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(
                ReflectionPad(3), nn.Conv2D(ngf, 7, in_channels=in_channels), InstanceNorm(),
                nn.Activation("relu"),
            )
            channels = ngf
            for _ in range(2):
                self.features.add(
                    nn.Conv2D(channels * 2, 3, strides=2, padding=1, in_channels=channels),
                    InstanceNorm(), nn.Activation("relu"),
                )
                channels *= 2
            for _ in range(n_blocks):
                self.features.add(ResnetBlock(channels))
            for _ in range(2):
                self.features.add(
                    nn.Conv2DTranspose(channels // 2, 3, strides=2, padding=1, output_padding=1,
                                       in_channels=channels),
                    InstanceNorm(), nn.Activation("relu"),
                )
                channels //= 2
            self.features.add(
                ReflectionPad(3), nn.Conv2D(out_channels, 7, in_channels=channels),
                nn.Activation("tanh"),
            )

    def hybrid_forward(self, F, x):
        return self.features(x)


class PatchDiscriminator(nn.HybridBlock):
    """The PatchGAN: one real/fake score per overlapping patch (70x70 with 3 layers).

    C64 (no norm) - C128 - C256 - C512 (stride 1) - 1-channel 4x4 convolution; a 256x256
    image gives a 30x30 map of scores.
    """

    def __init__(self, in_channels: int = 3, ndf: int = 64, n_layers: int = 3, **kwargs) -> None:
        super().__init__(**kwargs)
        if n_layers < 1 or ndf < 1:
            raise ValueError(f"ndf and n_layers must be positive, got ndf={ndf}, n_layers={n_layers}")
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(
                nn.Conv2D(ndf, 4, strides=2, padding=1, in_channels=in_channels), nn.LeakyReLU(0.2)
            )
            channels = ndf
            for n in range(1, n_layers + 1):
                out = ndf * min(2 ** n, 8)
                stride = 2 if n < n_layers else 1
                self.features.add(
                    nn.Conv2D(out, 4, strides=stride, padding=1, in_channels=channels),
                    InstanceNorm(), nn.LeakyReLU(0.2),
                )
                channels = out
            self.features.add(nn.Conv2D(1, 4, strides=1, padding=1, in_channels=channels))

    def hybrid_forward(self, F, x):
        return self.features(x)


def cyclegan_resnet_generator(
    n_blocks: int = 9, ngf: int = 64, in_channels: int = 3, out_channels: int = 3
) -> ResnetGenerator:
    """The CycleGAN generator (9 blocks for 256x256 images, 6 for 128x128)."""
    return ResnetGenerator(in_channels, out_channels, ngf=ngf, n_blocks=n_blocks)


def patchgan_discriminator(ndf: int = 64, n_layers: int = 3, in_channels: int = 3) -> PatchDiscriminator:
    """The 70x70 PatchGAN discriminator of CycleGAN and pix2pix."""
    return PatchDiscriminator(in_channels, ndf=ndf, n_layers=n_layers)
