"""Multi-scale and flipped evaluation of semantic-segmentation models, as GluonCV scores them.

GluonCV reports its multi-scale pixAcc/mIoU with ``MultiEvalModel`` (``gluoncv/model_zoo/segbase.py``);
:class:`MultiScaleEvaluator` computes the same class scores for any network whose first output is
``NCHW`` class scores, so that results compare with GluonCV's table. For each scale the image's
longer side becomes ``ceil(base_size * scale)`` (bilinear, aspect ratio kept, corners aligned).
An image whose sides fit the window is padded to ``crop_size`` with the value a zero pixel has after
normalisation and run once; a larger one is covered by ``crop_size`` windows every
``int(crop_size * 2 / 3)`` pixels (each padded the same way where it overhangs), and overlapping
windows are averaged. Each window's score is ``exp(logits + flip(logits of the flipped window))``
(plain ``exp(logits)`` without flipping: GluonCV's quirk, kept because it weighs the scales). The
scores are resized back to the image and summed over the scales.

Equal to GluonCV's ``MultiEvalModel`` on the same network and image (within float tolerance;
``tests/segmentation/test_segmentation_eval.py``). Faster: the network runs as a graph pruned to
its first output (:func:`main_prediction`), so auxiliary heads, which GluonCV computes and throws
away for every window, are not computed; and padding is one operation instead of one per channel.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Sequence

from gluon_hub.compat import mx

from ..common.zoo import IMAGENET_MEAN, IMAGENET_STD

__all__ = ["DEFAULT_SCALES", "MultiScaleEvaluator", "first_output", "main_prediction", "window_starts"]

#: the scales GluonCV evaluates its published segmentation models at
DEFAULT_SCALES: tuple[float, ...] = (0.5, 0.75, 1.0, 1.25, 1.5, 1.75)
#: windows start every ``crop_size * STRIDE_RATE`` pixels (rounded down)
STRIDE_RATE = 2.0 / 3.0


def first_output(outputs: Any) -> Any:
    """The class scores of a segmentation network: its only output, or the first of several
    (the main head; auxiliary heads follow it)."""
    return outputs[0] if isinstance(outputs, (list, tuple)) else outputs


def main_prediction(net: Any, fixed_shape: bool = True) -> Callable[[Any], Any]:
    """``x -> first_output(net(x))``, computing nothing that only the other outputs need.

    A ``HybridBlock`` with several outputs is traced once and its graph cut down to the first
    output: the auxiliary heads (FCN, PSPNet, DeepLab, Fast-SCNN on stage 3 ...) drop out of it.
    The pruned graph shares the network's parameters (later changes to them are seen) and runs
    with a static memory plan, for one input shape when ``fixed_shape`` (planned again whenever
    the shape changes: pass False for inputs of varying sizes). A network that cannot be traced,
    has one output, or was compiled for a backend (:func:`gluon_hub.optimize`: its fused graph
    is kept) is called as it is.
    """
    plain = lambda x: first_output(net(x))  # noqa: E731
    if not isinstance(net, mx.gluon.HybridBlock) or getattr(net, "_backend", None):
        return plain
    data = mx.sym.var("data", dtype="float32")  # typed: SymbolBlock infers its parameters' types from it
    try:
        outputs = net(data)
    except Exception:  # noqa: BLE001 (a forward that needs concrete arrays: it runs as it is)
        return plain
    if not isinstance(outputs, (list, tuple)) or len(outputs) == 1:
        return plain
    with warnings.catch_warnings():  # the input's dtype is known only at the first call, as usual
        warnings.filterwarnings("ignore", message="Cannot decide type")
        pruned = mx.gluon.SymbolBlock(outputs[0], data, params=net.collect_params())
    pruned.hybridize(static_alloc=True, static_shape=fixed_shape)
    return pruned


def window_starts(length: int, crop_size: int, stride: int) -> list[int]:
    """Where the sliding windows start along a side of ``length`` (at least ``crop_size``) pixels.

    ``ceil((length - crop) / stride) + 1`` windows, ``stride`` apart; the last may overhang.
    """
    if length < crop_size:
        raise ValueError(f"a side of {length} pixels is shorter than the {crop_size}-pixel window; pad it first")
    return [i * stride for i in range(int(math.ceil((length - crop_size) / stride)) + 1)]


class MultiScaleEvaluator:
    """Class scores of one image evaluated at several scales, with flipping, in windows.

    Parameters
    ----------
    net
        A network (hybridized or not) whose first output is ``(N, classes, h, w)`` scores for an
        ``(N, 3, h, w)`` input; an output smaller than its input is resized to it.
    num_classes
        Channels of the scores.
    base_size, crop_size
        The longer side at scale 1, and the side of the square windows (GluonCV: 520 and 480 for
        VOC and ADE20K, 2048 and 768 for Cityscapes); default: the network's ``base_size`` and
        ``crop_size`` attributes.
    scales
        Longer side multipliers; ``(1.0,)`` with ``flip=False`` is single-scale sliding windows.
    flip
        Add the scores of the horizontally mirrored input.
    mean, std
        The input normalisation: padding uses ``-mean / std``, the value of a black pixel.
    ctx
        Where the scores are computed (default: the image's device).

    Examples
    --------
    >>> from gluon_hub.compat import mx
    >>> net = mx.gluon.nn.Conv2D(4, 1, in_channels=3)
    >>> net.initialize()
    >>> evaluator = MultiScaleEvaluator(net, 4, base_size=24, crop_size=16, scales=(0.5, 1.0))
    >>> evaluator(mx.nd.zeros((3, 10, 20))).shape
    (1, 4, 10, 20)
    """

    def __init__(self, net: Any, num_classes: int, base_size: int | None = None, crop_size: int | None = None,
                 scales: Sequence[float] = DEFAULT_SCALES, flip: bool = True,
                 mean: Sequence[float] = IMAGENET_MEAN, std: Sequence[float] = IMAGENET_STD,
                 ctx: Any = None) -> None:
        base_size = base_size if base_size is not None else getattr(net, "base_size", None)
        crop_size = crop_size if crop_size is not None else getattr(net, "crop_size", None)
        if base_size is None or crop_size is None:
            raise ValueError("the network has no base_size / crop_size attributes: pass base_size= and crop_size=")
        if num_classes < 1 or base_size < 1 or crop_size < 2:
            raise ValueError(f"need num_classes >= 1, base_size >= 1 and crop_size >= 2; got {num_classes}, "
                             f"{base_size} and {crop_size}")
        if not scales or min(scales) <= 0:
            raise ValueError(f"scales must be positive numbers, got {list(scales)}")
        if len(mean) != len(std) or 0 in std:
            raise ValueError("mean and std need one non-zero std per channel")
        self.net = net
        self._predict = main_prediction(net)
        self.num_classes = num_classes
        self.base_size = int(base_size)
        self.crop_size = int(crop_size)
        self.scales = tuple(float(s) for s in scales)
        self.flip = flip
        self.ctx = ctx
        self._pad_value = [-m / s for m, s in zip(mean, std)]

    def __call__(self, image: Any) -> Any:
        """Summed class scores ``(1, classes, H, W)`` of a normalised ``(3, H, W)`` (or ``(1, 3, H, W)``) image."""
        if image.ndim == 3:
            image = image.expand_dims(0)
        if image.ndim != 4 or image.shape[0] != 1 or image.shape[1] != len(self._pad_value):
            raise ValueError(f"expected one normalised image of shape (3, H, W), got {image.shape}")
        ctx = self.ctx or image.context
        image = image.as_in_context(ctx)
        _, _, height, width = image.shape
        total = mx.nd.zeros((1, self.num_classes, height, width), ctx=ctx)
        for scale in self.scales:
            total += _resize(self._at_scale(image, scale), height, width)
        return total

    def predict(self, image: Any) -> Any:
        """The ``(H, W)`` class index of each pixel (``int32`` NDArray)."""
        return self(image)[0].argmax(axis=0).astype("int32")

    def _at_scale(self, image: Any, scale: float) -> Any:
        """Scores of ``image`` resized so that its longer side is ``ceil(base_size * scale)``, at that size."""
        _, _, height, width = image.shape
        long_side = int(math.ceil(self.base_size * scale))
        if height > width:
            new_h, new_w = long_side, int(1.0 * width * long_side / height + 0.5)
        else:
            new_h, new_w = int(1.0 * height * long_side / width + 0.5), long_side
        resized = _resize(image, new_h, new_w)
        crop = self.crop_size
        padded = self._pad(resized)  # no-op when both sides reach the window
        if long_side <= crop:
            return self._window(padded)[:, :, :new_h, :new_w]
        ph, pw = padded.shape[2:]
        stride = int(crop * STRIDE_RATE)
        scores = mx.nd.zeros((1, self.num_classes, ph, pw), ctx=image.context)
        counts = mx.nd.zeros((1, 1, ph, pw), ctx=image.context)
        for top in window_starts(ph, crop, stride):
            for left in window_starts(pw, crop, stride):
                bottom, right = min(top + crop, ph), min(left + crop, pw)
                window = self._pad(padded[:, :, top:bottom, left:right])
                scores[:, :, top:bottom, left:right] += self._window(window)[:, :, :bottom - top, :right - left]
                counts[:, :, top:bottom, left:right] += 1
        return (scores / counts)[:, :, :new_h, :new_w]

    def _pad(self, image: Any) -> Any:
        """``image`` padded at the bottom and right to at least ``crop_size`` with the black-pixel value."""
        _, channels, height, width = image.shape
        crop = self.crop_size
        if height >= crop and width >= crop:
            return image
        fill = mx.nd.array(self._pad_value, ctx=image.context).reshape((1, channels, 1, 1))
        padded = mx.nd.broadcast_to(fill, shape=(1, channels, max(height, crop), max(width, crop))).copy()
        padded[:, :, :height, :width] = image
        return padded

    def _window(self, window: Any) -> Any:
        """``exp`` of the window's scores (plus its mirror's, mirrored back, with ``flip``)."""
        scores = self._scores(window)
        if self.flip:
            scores = scores + self._scores(window.flip(axis=3)).flip(axis=3)
        return scores.exp()

    def _scores(self, window: Any) -> Any:
        """The network's scores of one window, at the window's size. The mirrored window is a
        second call rather than a batch of two: on a CPU, oneDNN runs two batches of one a
        little faster, and one static memory plan serves both calls."""
        scores = self._predict(window)
        if scores.shape[2:] != window.shape[2:]:
            scores = _resize(scores, *window.shape[2:])
        return scores


def _resize(x: Any, height: int, width: int) -> Any:
    """Bilinear resize with aligned corners (MXNet's ``BilinearResize2D`` default, as GluonCV uses it)."""
    return mx.nd.contrib.BilinearResize2D(x, height=height, width=width)
