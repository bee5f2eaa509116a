"""Preprocessing presets built from a model's ``InputSpec``.

The geometry and normalisation a model was trained with live in its spec, so the
evaluation and training pipelines are derived from there instead of being repeated in
every script. Both presets take an ``HWC`` ``uint8`` image (what the datasets return and
``mx.image.imread`` decodes) and give a ``CHW`` ``float32`` tensor.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from gluon_hub import InputSpec, ModelSpec, runtime
from gluon_hub.compat import mx

T = mx.gluon.data.vision.transforms

__all__ = ["Geometry", "geometry", "eval_transform", "train_transform", "RandomPadCrop"]


@dataclass(frozen=True)
class Geometry:
    """Sizes and normalisation of a model's input, with the spec's gaps filled in.

    ``resize`` is the shorter side an evaluation image is scaled to before the centre
    ``crop``; ``large`` tells ImageNet-style models (resize larger than the crop) from
    small-image ones such as the CIFAR networks, which train with pad-and-crop instead.
    """

    crop: int
    resize: int
    mean: tuple[float, ...] | None
    std: tuple[float, ...] | None
    large: bool


def geometry(model: str | ModelSpec | InputSpec) -> Geometry:
    """The input geometry of a model (a name, its spec or its ``InputSpec``): the core's
    evaluation geometry (means on the 0-1 scale), plus whether the model is ImageNet-style."""
    core = runtime.geometry(model)
    return Geometry(crop=core.crop, resize=core.resize, mean=core.mean, std=core.std,
                    large=core.resize > core.crop)


def _to_tensor(geo: Geometry) -> list[Any]:
    """``ToTensor`` (to [0, 1]) and normalisation."""
    steps: list[Any] = [T.ToTensor()]
    if geo.mean is not None and geo.std is not None:
        steps.append(T.Normalize(geo.mean, geo.std))
    return steps


def eval_transform(model: str | ModelSpec | InputSpec) -> Any:
    """Evaluation preprocessing: shorter side to ``resize``, centre ``crop``, normalise.

    Examples
    --------
    >>> from gluon_hub import InputSpec
    >>> from gluon_hub.compat import mx
    >>> spec = InputSpec(resize=256, crop=224, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))
    >>> eval_transform(spec)(mx.nd.zeros((300, 400, 3), dtype="uint8")).shape
    (3, 224, 224)
    """
    geo = geometry(model)
    return T.Compose([T.Resize(geo.resize, keep_ratio=True), T.CenterCrop(geo.crop), *_to_tensor(geo)])


def train_transform(
    model: str | ModelSpec | InputSpec,
    *,
    jitter: float = 0.4,
    lighting: float = 0.1,
    pad: int = 4,
) -> Any:
    """Training augmentation for a model's input.

    ImageNet-style models (``resize`` larger than ``crop``) get a random resized crop,
    horizontal flip, colour jitter (brightness, contrast, saturation by ``jitter``) and
    PCA lighting noise (``lighting``), the recipe of the GluonCV ImageNet results.
    Small-image models (CIFAR) get a ``pad``-pixel border, a random crop and a flip.
    """
    geo = geometry(model)
    if jitter < 0 or lighting < 0 or pad < 0:
        raise ValueError("jitter, lighting and pad must be non-negative")
    if geo.large:
        steps: list[Any] = [T.RandomResizedCrop(geo.crop), T.RandomFlipLeftRight()]
        if jitter:
            steps.append(T.RandomColorJitter(brightness=jitter, contrast=jitter, saturation=jitter))
        if lighting:
            steps.append(T.RandomLighting(lighting))
    else:
        steps = [T.Resize(geo.crop, keep_ratio=True), RandomPadCrop(geo.crop, pad), T.RandomFlipLeftRight()]
    return T.Compose(steps + _to_tensor(geo))


class RandomPadCrop(mx.gluon.Block):
    """Pad an ``HWC`` image with ``pad`` zero pixels on each side, then crop ``size`` at random."""

    def __init__(self, size: int, pad: int = 4) -> None:
        super().__init__()
        self._size = size
        self._pad = pad

    def forward(self, image: Any) -> Any:
        if self._pad:
            p = self._pad
            image = mx.image.copyMakeBorder(image, p, p, p, p, type=0)
        height, width = image.shape[:2]
        if height < self._size or width < self._size:
            raise ValueError(f"image {height}x{width} is smaller than the crop {self._size}")
        top = random.randint(0, height - self._size)
        left = random.randint(0, width - self._size)
        return image[top : top + self._size, left : left + self._size]
