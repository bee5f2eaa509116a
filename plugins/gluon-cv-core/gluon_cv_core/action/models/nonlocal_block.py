"""The non-local block ("Non-local Neural Networks", arXiv:1711.07971), embedded-Gaussian
form, with GluonCV 0.10's parameter layout.

Every position of a ``(N, C, T, H, W)`` map attends to every other: softmax over
``theta(x)^T phi(x) / sqrt(d)`` weights ``g(x)``, a 1x1x1 convolution ``W`` and a norm whose
scale starts at zero map the result back, and it is added to ``x`` (so a new block starts as
the identity). ``W`` and ``bn`` are also reachable as ``W_bn``, as in GluonCV's files.
"""

from __future__ import annotations

from typing import Any, Callable

from ...common.blocks import HybridBlock, make_norm, mx, nn
from ...common.norm import BatchNorm3D

__all__ = ["NonLocal"]


class NonLocal(HybridBlock):
    """Embedded-Gaussian non-local block over 3D feature maps.

    Parameters
    ----------
    in_channels : channels of the input (and output).
    embed_dim : channels of the embeddings ``theta``, ``phi``, ``g``; default half the input's.
    sub_sample : max-pool ``phi`` and ``g`` 2x2 spatially, so fewer positions are attended to.
    use_bn : normalise the output projection (its scale initialised to zero).
    """

    def __init__(self, in_channels: int, embed_dim: int | None = None, sub_sample: bool = False,
                 use_bn: bool = True, norm_layer: Callable[..., HybridBlock] = BatchNorm3D,
                 norm_kwargs: dict | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.embed_dim = embed_dim or in_channels // 2
        self.sub_sample = sub_sample
        self.use_bn = use_bn
        msra = mx.init.MSRAPrelu()

        def projection(cin: int, cout: int) -> Any:
            return nn.Conv3D(in_channels=cin, channels=cout, kernel_size=1, weight_initializer=msra)

        with self.name_scope():
            self.theta = projection(in_channels, self.embed_dim)
            self.phi = projection(in_channels, self.embed_dim)
            self.g = projection(in_channels, self.embed_dim)
            if sub_sample:
                self.max_pool = nn.MaxPool3D(pool_size=(1, 2, 2))
                self.sub_phi = nn.HybridSequential()
                self.sub_phi.add(self.phi, self.max_pool)
                self.sub_g = nn.HybridSequential()
                self.sub_g.add(self.g, self.max_pool)
            self.W = projection(self.embed_dim, in_channels)
            if use_bn:
                self.bn = make_norm(norm_layer, norm_kwargs, in_channels=in_channels, gamma_initializer="zeros")
                self.W_bn = nn.HybridSequential()
                self.W_bn.add(self.W, self.bn)

    def hybrid_forward(self, F, x):
        theta = F.reshape(self.theta(x), (0, 0, -1))
        phi = F.reshape(self.sub_phi(x) if self.sub_sample else self.phi(x), (0, 0, -1))
        g = F.reshape(self.sub_g(x) if self.sub_sample else self.g(x), (0, 0, -1))
        # (N, THW, THW) affinities, scaled as in the Transformer so the softmax stays soft
        attention = F.softmax(F.batch_dot(theta, phi, transpose_a=True) * (self.embed_dim ** -0.5), axis=2)
        y = F.reshape_like(F.batch_dot(g, attention, transpose_b=True), x,
                           lhs_begin=2, lhs_end=None, rhs_begin=2, rhs_end=None)
        return (self.W_bn(y) if self.use_bn else self.W(y)) + x
