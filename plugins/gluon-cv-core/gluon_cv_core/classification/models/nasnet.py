"""NASNet-A ("Learning Transferable Architectures for Scalable Image Recognition",
arXiv:1707.07012), with GluonCV 0.10's parameter layout. GluonCV publishes no weights for it.

A network is named ``repeat @ penultimate_filters``: three stacks of ``repeat`` normal cells,
separated by two reduction cells, after a conv stem and two reduction stem cells. Cells take
the two previous cells' outputs; when those differ in resolution, the older one is
downsampled by the factorized reduction (two shifted 1x1 convs on alternate pixels).

GluonCV trains with an auxiliary classifier after the second stack; ``use_aux=True`` builds it
and then the network returns ``(logits, aux_logits)`` as GluonCV's does. The registry's models
are built without it, so they return the logits alone.
"""

from __future__ import annotations

from typing import Any, Callable

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.blocks import BatchNorm, HybridBlock, make_norm, nn

__all__ = ["NASNetA", "nasnet"]

#: GluonCV's norm settings (its ``momentum=0.1`` is PyTorch's value; in MXNet it means the
#: running statistics follow each batch almost entirely)
_NORM_OPTIONS = {"momentum": 0.1, "epsilon": 0.001}


def _norm(norm: dict) -> Any:
    return make_norm(norm["norm_layer"], norm["norm_kwargs"], **_NORM_OPTIONS)


def _relu_conv_norm(channels: int, norm: dict) -> Any:
    """relu, 1x1 conv, norm: how every cell first brings its inputs to its width."""
    out = nn.HybridSequential(prefix="")
    out.add(nn.Activation("relu"), nn.Conv2D(channels, 1, use_bias=False), _norm(norm))
    return out


class _Separable(HybridBlock):
    """Depthwise ``kernel`` x ``kernel`` conv ('same' padding), then pointwise 1x1."""

    def __init__(self, in_channels: int, channels: int, kernel: int, strides: int) -> None:
        super().__init__()
        self.body = nn.HybridSequential(prefix="")
        self.body.add(nn.Conv2D(in_channels, kernel, strides, kernel // 2, groups=in_channels, use_bias=False),
                      nn.Conv2D(channels, 1, use_bias=False))

    def hybrid_forward(self, F, x):
        return self.body(x)


def _concat(F, *parts):
    """Channel concatenation; while autograd records, its result is copied into a plain layout.

    On AVX-512, oneDNN hands the concatenation's backward a gradient in 16-channel blocks,
    which MXNet 1.9.1 cannot cut at this network's widths (44, 88, ... channels): the step
    fails with "could not construct a sub-memory". An identity transpose copies into a plain
    layout and its backward gives the concatenation a plain gradient. In-place identities
    (reshape, cast, ``+ 0``) do not help when hybridized: MXNet writes their gradient back into
    the blocked buffer. Values are unchanged. A graph traced for inference has no copies; one
    traced while recording keeps them for later calls (hybridized ``nasnet_4_1056`` at 224
    pixels ran as fast with them as without, within timing noise, on 2 AVX-512 cores).
    """
    out = F.concat(*parts, dim=1)
    return F.transpose(out, axes=(0, 1, 2, 3)) if mx.autograd.is_recording() else out


def _pad_top_left(F, x):
    return F.pad(x, mode="constant", constant_value=0, pad_width=(0, 0, 0, 0, 1, 0, 1, 0))


def _crop_top_left(F, x):
    return F.slice(x, begin=(0, 0, 1, 1), end=(None, None, None, None))


class _Branch(HybridBlock):
    """Two rounds of relu, separable conv, norm; the first may stride. The middle width is
    the input's, or for the stem cell's branches on the stem conv (``stem``) the output's."""

    def __init__(self, in_channels: int, channels: int, kernel: int, strides: int, norm: dict,
                 stem: bool = False) -> None:
        super().__init__()
        middle = channels if stem else in_channels
        self.body = nn.HybridSequential(prefix="")
        self.body.add(nn.Activation("relu"), _Separable(in_channels, middle, kernel, strides), _norm(norm),
                      nn.Activation("relu"), _Separable(middle, channels, kernel, 1), _norm(norm))

    def hybrid_forward(self, F, x):
        return self.body(x)


class _ShiftedBranch(HybridBlock):
    """A :class:`_Branch` whose first separable conv sees the input padded at the top and left,
    with the first output row and column dropped (GluonCV's first reduction cell)."""

    def __init__(self, channels: int, kernel: int, strides: int, norm: dict) -> None:
        super().__init__()
        self.separable = _Separable(channels, channels, kernel, strides)
        self.body = nn.HybridSequential(prefix="")
        self.body.add(_norm(norm), nn.Activation("relu"), _Separable(channels, channels, kernel, 1), _norm(norm))

    def hybrid_forward(self, F, x):
        x = self.separable(_pad_top_left(F, F.Activation(x, act_type="relu")))
        return self.body(_crop_top_left(F, x))


class _ShiftedPool(HybridBlock):
    """A 3x3/2 pool of the input padded at the top and left, first row and column dropped."""

    def __init__(self, pool_type: str) -> None:
        super().__init__()
        if pool_type == "max":
            self.pool = nn.MaxPool2D(3, strides=2, padding=1)
        else:
            self.pool = nn.AvgPool2D(3, strides=2, padding=1, count_include_pad=False)

    def hybrid_forward(self, F, x):
        return _crop_top_left(F, self.pool(_pad_top_left(F, x)))


def _avg_pool(strides: int) -> Any:
    return nn.AvgPool2D(3, strides=strides, padding=1, count_include_pad=False)


def _factorized_reduction(cell: HybridBlock, channels: int, norm: dict) -> None:
    """Give ``cell`` the two halves (``path_1``, ``path_2``: every other pixel, the second
    shifted by one) and ``final_path_bn`` that halve the resolution of its older input."""
    for name in ("path_1", "path_2"):
        path = nn.HybridSequential(prefix="")
        path.add(nn.AvgPool2D(1, strides=2, count_include_pad=False),
                 nn.Conv2D(channels // 2, 1, use_bias=False))
        setattr(cell, name, path)
    cell.final_path_bn = _norm(norm)


def _reduce(F, cell: HybridBlock, x):
    x = F.Activation(x, act_type="relu")
    shifted = _crop_top_left(F, F.pad(x, mode="constant", constant_value=0, pad_width=(0, 0, 0, 0, 0, 1, 0, 1)))
    return cell.final_path_bn(_concat(F, cell.path_1(x), cell.path_2(shifted)))


class _ReductionCell(HybridBlock):
    """Halves the resolution: five pairwise combinations of strided separable branches and
    pools of two inputs ``a`` and ``b``; four of them are concatenated.

    ``kind`` says where the inputs come from: ``"stem0"`` (``a`` = 1x1 of the stem conv,
    ``b`` = the stem conv), ``"stem1"`` (``a`` = 1x1 of the first stem cell, ``b`` = the stem
    conv's factorized reduction), ``"cell"`` (``a`` = 1x1 of the newer input, ``b`` = 1x1 of
    the older one) and ``"shifted"`` (as ``"cell"``, with GluonCV's shifted branches and pools).
    """

    def __init__(self, kind: str, channels: int, norm: dict, stem_channels: int = 0, prev_channels: int = 0) -> None:
        super().__init__()
        self.kind = kind
        if kind in ("cell", "shifted"):
            self.conv_prev_1x1 = _relu_conv_norm(prev_channels, norm)
        self.conv_1x1 = _relu_conv_norm(channels, norm)
        if kind == "stem1":
            _factorized_reduction(self, channels, norm)
        def pool(pool_type: str) -> Any:
            if kind == "shifted":
                return _ShiftedPool(pool_type)
            return nn.MaxPool2D(3, strides=2, padding=1) if pool_type == "max" else _avg_pool(2)

        def branch(kernel: int, strides: int, stem: bool = False) -> Any:
            if kind == "shifted":
                return _ShiftedBranch(channels, kernel, strides, norm)
            return _Branch(stem_channels if stem else channels, channels, kernel, strides, norm, stem=stem)

        from_stem = kind == "stem0"
        self.comb_iter_0_left = branch(5, 2)
        self.comb_iter_0_right = branch(7, 2, from_stem)
        self.comb_iter_1_left = pool("max")
        self.comb_iter_1_right = branch(7, 2, from_stem)
        self.comb_iter_2_left = pool("avg")
        self.comb_iter_2_right = branch(5, 2, from_stem)
        self.comb_iter_3_right = _avg_pool(1)
        self.comb_iter_4_left = branch(3, 1)
        self.comb_iter_4_right = pool("max")

    def _combine(self, F, a, b):
        x0 = self.comb_iter_0_left(a) + self.comb_iter_0_right(b)
        x1 = self.comb_iter_1_left(a) + self.comb_iter_1_right(b)
        x2 = self.comb_iter_2_left(a) + self.comb_iter_2_right(b)
        x3 = self.comb_iter_3_right(x0) + x1
        x4 = self.comb_iter_4_left(x0) + self.comb_iter_4_right(a)
        return _concat(F, x1, x2, x3, x4)

    def hybrid_forward(self, F, x, x_prev=None):
        if self.kind == "stem0":
            return self._combine(F, self.conv_1x1(x), x)
        if self.kind == "stem1":  # x: the stem conv, x_prev: the first stem cell
            return self._combine(F, self.conv_1x1(x_prev), _reduce(F, self, x))
        return self._combine(F, self.conv_1x1(x), self.conv_prev_1x1(x_prev)), x


class _NormalCell(HybridBlock):
    """Keeps the resolution: separable branches and 3x3 average pools of the two inputs,
    concatenated with the older input. The first cell after a reduction (``first``) brings the
    older input down by factorized reduction, the others by a 1x1 conv."""

    def __init__(self, prev_channels: int, channels: int, first: bool, norm: dict) -> None:
        super().__init__()
        self.first = first
        if first:
            _factorized_reduction(self, 2 * prev_channels, norm)
            prev_channels = channels  # the reduced input's width, 2 * prev_channels, is the cell's
        else:
            self.conv_prev_1x1 = _relu_conv_norm(prev_channels, norm)
        self.conv_1x1 = _relu_conv_norm(channels, norm)
        self.comb_iter_0_left = _Branch(channels, channels, 5, 1, norm)
        self.comb_iter_0_right = _Branch(prev_channels, prev_channels, 3, 1, norm)
        self.comb_iter_1_left = _Branch(prev_channels, prev_channels, 5, 1, norm)
        self.comb_iter_1_right = _Branch(prev_channels, prev_channels, 3, 1, norm)
        self.comb_iter_2_left = _avg_pool(1)
        self.comb_iter_3_left = _avg_pool(1)
        self.comb_iter_3_right = _avg_pool(1)
        self.comb_iter_4_left = _Branch(channels, channels, 3, 1, norm)

    def hybrid_forward(self, F, x, x_prev):
        left = _reduce(F, self, x_prev) if self.first else self.conv_prev_1x1(x_prev)
        right = self.conv_1x1(x)
        x0 = self.comb_iter_0_left(right) + self.comb_iter_0_right(left)
        x1 = self.comb_iter_1_left(left) + self.comb_iter_1_right(left)
        x2 = self.comb_iter_2_left(right) + left
        x3 = self.comb_iter_3_left(left) + self.comb_iter_3_right(left)
        x4 = self.comb_iter_4_left(right) + right
        return _concat(F, left, x0, x1, x2, x3, x4), x


class NASNetA(HybridBlock):
    """3x3/2 stem conv, two stem cells, three stacks of normal cells with reduction cells
    between them, relu, global pool, dropout, classifier."""

    def __init__(self, repeat: int = 6, penultimate_filters: int = 4032, stem_filters: int = 96,
                 filters_multiplier: int = 2, classes: int = 1000, use_aux: bool = False,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None) -> None:
        super().__init__()
        if repeat < 2:
            raise ValueError(f"repeat must be at least 2 (normal cells per stack), got {repeat}")
        norm = {"norm_layer": norm_layer, "norm_kwargs": norm_kwargs}
        self._traced_recording = False
        filters = penultimate_filters // 24
        self.conv0 = nn.HybridSequential(prefix="")
        self.conv0.add(nn.Conv2D(stem_filters, 3, strides=2, use_bias=False), _norm(norm))
        self.cell_stem_0 = _ReductionCell("stem0", filters // filters_multiplier ** 2, norm, stem_filters)
        self.cell_stem_1 = _ReductionCell("stem1", filters // filters_multiplier, norm)
        self.norm_1 = self._stack(repeat, filters // 2, filters, norm)
        self.reduction_cell_0 = _ReductionCell("shifted", 2 * filters, norm, prev_channels=2 * filters)
        self.norm_2 = self._stack(repeat, filters, 2 * filters, norm)
        if use_aux:
            self.out_aux = nn.HybridSequential(prefix="")
            self.out_aux.add(nn.Conv2D(filters // 3, 1, use_bias=False),
                             make_norm(norm_layer, norm_kwargs, epsilon=0.001), nn.Activation("relu"),
                             nn.Conv2D(2 * filters, 5, use_bias=False),
                             make_norm(norm_layer, norm_kwargs, epsilon=0.001), nn.Activation("relu"),
                             nn.Dense(classes))
        else:
            self.out_aux = None
        self.reduction_cell_1 = _ReductionCell("cell", 4 * filters, norm, prev_channels=4 * filters)
        self.norm_3 = self._stack(repeat, 2 * filters, 4 * filters, norm)
        self.out = nn.HybridSequential(prefix="")
        self.out.add(nn.Activation("relu"), nn.GlobalAvgPool2D(), nn.Dropout(0.5), nn.Dense(classes))

    @staticmethod
    def _stack(repeat: int, prev_channels: int, channels: int, norm: dict) -> Any:
        stack = nn.HybridSequential(prefix="")
        stack.add(_NormalCell(prev_channels, channels, True, norm))
        for _ in range(repeat - 1):
            stack.add(_NormalCell(channels, channels, False, norm))
        return stack

    def forward(self, x):
        """A hybridized graph traced outside ``autograd.record`` lacks the layout copies that a
        training step needs (see ``_concat``): the first recorded call traces it again, once."""
        if self._active and self._cached_graph and not self._traced_recording and mx.autograd.is_recording():
            self._clear_cached_op()
        return super().forward(x)

    def hybrid_forward(self, F, x):
        if F is mx.sym:
            self._traced_recording = mx.autograd.is_recording()
        stem = self.conv0(x)
        prev = self.cell_stem_0(stem)
        x = self.cell_stem_1(stem, prev)
        for cell in self.norm_1:
            x, prev = cell(x, prev)
        x, prev = self.reduction_cell_0(x, prev)
        for cell in self.norm_2:
            x, prev = cell(x, prev)
        aux = self.out_aux(F.contrib.AdaptiveAvgPooling2D(x, output_size=5)) if self.out_aux is not None else None
        x, prev = self.reduction_cell_1(x, prev)
        for cell in self.norm_3:
            x, prev = cell(x, prev)
        x = self.out(x)
        return (x, aux) if aux is not None else x


@head_argument("classes")
def nasnet(repeat: int, penultimate_filters: int, classes: int = 1000, use_aux: bool = False,
           norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
           stem_filters: int = 96, filters_multiplier: int = 2) -> NASNetA:
    """NASNet-A ``repeat @ penultimate_filters`` (GluonCV's 4@1056, 5@1538, 7@1920, 6@4032).

    ``stem_filters`` (the first convolution's width) and ``filters_multiplier`` (the stem
    cells' width divisor) are GluonCV's keywords; the published weights need 96 and 2.
    """
    return NASNetA(repeat, penultimate_filters, stem_filters, filters_multiplier, classes=classes, use_aux=use_aux,
                   norm_layer=norm_layer, norm_kwargs=norm_kwargs)
