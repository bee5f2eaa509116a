"""Pieces the 3D (clip) action recognisers share: a conv-norm-relu unit, the clip-level
consensus and classifier, and the inflation of 2D ImageNet weights into 3D kernels.

A 3D network takes ``(batch * num_segments * num_crop, 3, T, H, W)`` clips; each clip gives
one pooled feature, and the clips of one video are averaged before the classifier (GluonCV's
"segmental consensus"), so the output is ``(batch, nclass)``.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ...common.blocks import HybridBlock, make_norm, mx, nn
from ...common.norm import BatchNorm3D

__all__ = ["conv3d_unit", "ClipClassifier", "inflate_from_2d", "check_clips"]


def conv3d_unit(in_channels: int, channels: int, norm_layer: Callable[..., HybridBlock] = BatchNorm3D,
                norm_kwargs: dict | None = None, epsilon: float = 1e-3, **conv: Any) -> Any:
    """``HybridSequential`` (no prefix of its own) of a bias-free Conv3D, a norm and a relu."""
    unit = nn.HybridSequential(prefix="")
    unit.add(nn.Conv3D(in_channels=in_channels, channels=channels, use_bias=False, **conv))
    unit.add(make_norm(norm_layer, norm_kwargs, in_channels=channels, epsilon=epsilon))
    unit.add(nn.Activation("relu"))
    return unit


def check_clips(num_segments: int, num_crop: int) -> None:
    """Both counts of clips per video must be positive."""
    if num_segments < 1 or num_crop < 1:
        raise ValueError(f"num_segments and num_crop must be at least 1, got {num_segments} and {num_crop}")


class ClipClassifier(HybridBlock):
    """Base of the clip networks: ``pooled(x)`` -> (N, C, 1, 1, 1), the mean over a video's
    clips, then ``head`` (dropout, ``Dense``) unless ``feat_ext``.

    Subclasses build their layers, set ``self.head`` and implement :meth:`pooled`.
    """

    def __init__(self, feat_dim: int, num_segments: int, num_crop: int, feat_ext: bool, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        check_clips(num_segments, num_crop)
        self.feat_dim = feat_dim
        self.num_segments = num_segments
        self.num_crop = num_crop
        self.feat_ext = feat_ext

    @staticmethod
    def make_head(feat_dim: int, nclass: int, dropout_ratio: float, init_std: float) -> tuple[Any, Any]:
        """``(head, dense)``: dropout then a classifier with small normal initial weights."""
        head = nn.HybridSequential(prefix="")
        dense = nn.Dense(in_units=feat_dim, units=nclass, weight_initializer=mx.init.Normal(sigma=init_std))
        head.add(nn.Dropout(rate=dropout_ratio))
        head.add(dense)
        return head, dense

    def pooled(self, F, x):
        """The clips' globally pooled features, ``(N, feat_dim, 1, 1, 1)``."""
        raise NotImplementedError

    def hybrid_forward(self, F, x):
        pooled = F.squeeze(self.pooled(F, x), axis=(2, 3, 4))
        per_video = F.reshape(pooled, shape=(-1, self.num_segments * self.num_crop, self.feat_dim)).mean(axis=1)
        return per_video if self.feat_ext else self.head(per_video)


def _unique(params: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """``(structural name, parameter)`` in registration order, each parameter once."""
    seen: set[int] = set()
    unique = []
    for key, param in params:
        if id(param) not in seen:
            seen.add(id(param))
            unique.append((key, param))
    return unique


def inflate_from_2d(net3d: Any, net2d: Any, exclude3d: Iterable[Any] = (), exclude2d: Iterable[Any] = ()) -> int:
    """Copy an ImageNet network's weights into the 3D network built from it (I3D's bootstrap).

    Parameters pair up in registration order, as GluonCV pairs them: a 2D kernel ``(O, I, kh,
    kw)`` becomes ``(O, I, t, kh, kw)``, repeated ``t`` times and divided by ``t`` (so a clip of
    identical frames gives the 2D response), and norm parameters are copied. ``exclude3d`` and
    ``exclude2d`` are parameters left out (classifiers, non-local blocks). Both networks must
    already hold data; returns the number of parameters set.
    """
    skip3d, skip2d = {id(p) for p in exclude3d}, {id(p) for p in exclude2d}
    pairs3d = [(k, p) for k, p in _unique(net3d._collect_params_with_prefix().items()) if id(p) not in skip3d]
    pairs2d = [(k, p) for k, p in _unique(net2d._collect_params_with_prefix().items()) if id(p) not in skip2d]
    if len(pairs3d) != len(pairs2d):
        raise ValueError(f"cannot inflate: the 2D network has {len(pairs2d)} parameters to copy, "
                         f"the 3D network {len(pairs3d)}")
    for (key3d, param3d), (key2d, param2d) in zip(pairs3d, pairs2d):
        value = param2d.data()
        shape3d = tuple(param3d.shape)
        if value.ndim == 4 and len(shape3d) == 5:
            frames = shape3d[2]
            value = mx.nd.broadcast_to(value.expand_dims(axis=2), shape=(0, 0, frames, 0, 0)) / frames
        if tuple(value.shape) != shape3d:
            raise ValueError(f"cannot inflate {key2d} {tuple(param2d.shape)} into {key3d} {shape3d}")
        param3d.set_data(value)
    return len(pairs3d)
