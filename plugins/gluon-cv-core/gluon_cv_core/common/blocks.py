"""Layers and builders shared by several families.

Parameter names follow from attribute names and positions inside ``HybridSequential``
containers, so the helpers here add layers in a fixed order: changing the order would
change the names that GluonCV's published ``.params`` files use.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable

from gluon_hub.compat import mx

nn = mx.gluon.nn
HybridBlock = mx.gluon.HybridBlock
BatchNorm = nn.BatchNorm


def make_norm(norm_layer: Callable[..., HybridBlock], norm_kwargs: dict | None, **options: Any):
    """A normalization layer; ``norm_kwargs`` (for example SyncBatchNorm's) win over options."""
    return norm_layer(**{**options, **(norm_kwargs or {})})


class ReLU6(HybridBlock):
    """``min(max(x, 0), 6)``."""

    def hybrid_forward(self, F, x):
        return F.clip(x, 0, 6)


class HardSigmoid(HybridBlock):
    """``relu6(x + 3) / 6``, the piecewise-linear sigmoid of MobileNetV3.

    Computed as ``clip(x / 6 + 0.5, 0, 1)`` by MXNet's one ``hard_sigmoid`` operator instead of
    GluonCV's ``clip(x + 3, 0, 6) / 6``, three passes over the activations: optimized
    ``mobilenetv3_large`` runs 1.2x faster so (389 -> 315 ms at batch 32 on 2 cores), and its
    int8 graph loses two float32 operators per activation. The results differ by float32
    rounding (1e-6 of the logits' scale).
    """

    def hybrid_forward(self, F, x):
        return F.hard_sigmoid(x, alpha=1.0 / 6.0, beta=0.5)


class HardSwish(HardSigmoid):
    """``x * hard_sigmoid(x)``."""

    def hybrid_forward(self, F, x):
        return x * super().hybrid_forward(F, x)


def activation(name: str) -> HybridBlock:
    """A parameter-free activation block by name."""
    if name == "relu6":
        return ReLU6()
    if name == "hard_swish":
        return HardSwish()
    if name == "hard_sigmoid":
        return HardSigmoid()
    if name == "leaky":
        return nn.LeakyReLU(0.1)
    return nn.Activation(name)


def add_conv_norm(
    seq: Any,
    channels: int,
    kernel_size: int | tuple[int, int],
    strides: int = 1,
    padding: int | tuple[int, int] = 0,
    groups: int = 1,
    act: str | None = "relu",
    norm_layer: Callable[..., HybridBlock] = BatchNorm,
    norm_kwargs: dict | None = None,
    norm_options: dict | None = None,
) -> Any:
    """Append a bias-free convolution, a normalization and an optional activation to ``seq``."""
    seq.add(nn.Conv2D(channels, kernel_size, strides, padding, groups=groups, use_bias=False))
    seq.add(make_norm(norm_layer, norm_kwargs, **(norm_options or {})))
    if act is not None:
        seq.add(activation(act))
    return seq


def conv_norm(channels: int, kernel_size: int | tuple[int, int], **options: Any) -> Any:
    """A new ``HybridSequential`` holding conv, norm and activation (see :func:`add_conv_norm`)."""
    return add_conv_norm(nn.HybridSequential(prefix=""), channels, kernel_size, **options)


def add_deep_stem(seq: Any, stem_width: int, norm_layer: Callable[..., HybridBlock],
                  norm_kwargs: dict | None) -> Any:
    """Append the three-3x3-convolution stem of ResNet-C/D and ResNeXt-E; its last conv has no norm."""
    # the norms' width is given: GroupNorm cannot infer it
    width = {"in_channels": stem_width}
    add_conv_norm(seq, stem_width, 3, 2, 1, norm_layer=norm_layer, norm_kwargs=norm_kwargs, norm_options=width)
    add_conv_norm(seq, stem_width, 3, 1, 1, norm_layer=norm_layer, norm_kwargs=norm_kwargs, norm_options=width)
    seq.add(nn.Conv2D(stem_width * 2, 3, 1, 1, use_bias=False))
    return seq


def projection(channels: int, strides: int, avg_down: bool, norm_layer: Callable[..., HybridBlock],
               norm_kwargs: dict | None, in_channels: int = 0, prefix: str = "") -> Any:
    """The projection shortcut of a residual block: 1x1 conv and norm, average-pooled first
    (ResNet-D) when ``avg_down``, so the strided 1x1 conv does not skip three pixels in four.

    With a ``prefix`` (GluonCV's ResNet V1b uses ``down<stage>_``) the layers are named in
    its scope, so that name patterns such as Faster R-CNN's trained-parameter regex match."""
    seq = nn.HybridSequential(prefix=prefix)
    with (seq.name_scope() if prefix else contextlib.nullcontext()):
        if avg_down:
            seq.add(nn.AvgPool2D(pool_size=strides, strides=strides, ceil_mode=True,
                                 count_include_pad=False))
            seq.add(nn.Conv2D(channels, 1, 1, use_bias=False, in_channels=in_channels))
        else:
            seq.add(nn.Conv2D(channels, 1, strides, use_bias=False, in_channels=in_channels))
        seq.add(make_norm(norm_layer, norm_kwargs))
    return seq


def add_imagenet_stem(seq: Any, norm_layer: Callable[..., HybridBlock], norm_kwargs: dict | None,
                      deep_stem: bool = False, stem_width: int = 64) -> Any:
    """Append the ImageNet stem (7x7/2 conv or deep stem, norm, relu, 3x3/2 max-pool)."""
    if deep_stem:
        add_deep_stem(seq, stem_width, norm_layer, norm_kwargs)
    else:
        seq.add(nn.Conv2D(64, 7, 2, 3, use_bias=False))
    seq.add(make_norm(norm_layer, norm_kwargs))
    seq.add(nn.Activation("relu"))
    seq.add(nn.MaxPool2D(3, 2, 1))
    return seq


def check_choice(what: str, value: Any, choices: Any) -> None:
    """Raise ValueError naming the accepted values when ``value`` is not one of them."""
    if value not in choices:
        raise ValueError(f"{what} must be one of {sorted(choices)}, got {value!r}")


#: GluonCV's required keyword whose value is a block the hub builds itself from the model name
#: (``features``, ``heads`` ...): only leaving it out (None) matches.
BUILT_FROM_NAME = object()


def _plain(value: Any) -> Any:
    """``value`` with tuples as lists, so ``(1, 1)`` and ``[1, 1]`` compare equal."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def check_gluoncv_structure(model: str, given: dict[str, Any], built: dict[str, Any]) -> None:
    """Refuse a GluonCV keyword that would change the network where the hub's builder cannot.

    GluonCV's model functions hand ``**kwargs`` on to their classes, so they take keywords that
    rebuild part of a named network (stems, widths, predictors). The hub accepts each one
    (``None``: left out) with the value this network has, GluonCV's default there, so GluonCV's
    call patterns keep working; any other value is an error rather than a silently different model.
    """
    for keyword, value in given.items():
        if value is None:
            continue
        have = built[keyword]
        if have is not BUILT_FROM_NAME and _plain(value) == _plain(have):
            continue
        now = ("builds it from the model name" if have is BUILT_FROM_NAME
               else f"has {keyword}={have!r} (which you may pass)")
        raise ValueError(
            f"{model}: {keyword}={value!r} would build a different network in GluonCV; the hub's "
            f"{model} {now} and cannot rebuild it. Leave {keyword} out, or build that network "
            f"with GluonCV itself"
        )
