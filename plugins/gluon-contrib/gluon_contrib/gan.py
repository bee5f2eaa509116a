"""What CycleGAN trains with: the least-squares GAN loss, the cycle-consistency and
identity losses, the history pool of generated images and the linear learning-rate decay.

Losses return one value per sample, as Gluon's losses do; average them for a scalar.
"""

from __future__ import annotations

import random

from gluon_hub.compat import mx

__all__ = ["LSGANLoss", "CycleConsistencyLoss", "IdentityLoss", "ImagePool", "linear_decay"]


def _check_weight(weight: float) -> float:
    """A loss weight is a non-negative number (0 turns the term off)."""
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight < 0:
        raise ValueError(f"a loss weight must be a non-negative number, got {weight!r}")
    return float(weight)


def _per_sample_mean(F, x):
    return F.mean(F.reshape(x, shape=(0, -1)), axis=1)


class LSGANLoss(mx.gluon.Block):
    """Least-squares GAN loss (Mao et al., 2017): ``mean((D(x) - target)^2)``, the target
    1 for real and 0 for fake; more stable than the log loss, which CycleGAN replaces."""

    # Explicit keywords only: the hub checks a loss's keywords against this signature, and
    # ``**kwargs`` would let a typo through to Block's obscure TypeError.
    def __init__(self, weight: float = 1.0) -> None:
        super().__init__()
        self._weight = _check_weight(weight)

    def forward(self, prediction, real: bool):
        target = 1.0 if real else 0.0
        return _per_sample_mean(mx.nd, mx.nd.square(prediction - target)) * self._weight


class _ScaledL1(mx.gluon.HybridBlock):
    def __init__(self, weight: float) -> None:
        super().__init__()
        self._weight = _check_weight(weight)

    def hybrid_forward(self, F, prediction, target):
        return _per_sample_mean(F, F.abs(prediction - target)) * self._weight


class CycleConsistencyLoss(_ScaledL1):
    """``lambda * |G_BA(G_AB(a)) - a|_1``: translating there and back gives the input;
    the paper's lambda is 10."""

    def __init__(self, weight: float = 10.0) -> None:
        super().__init__(weight)


class IdentityLoss(_ScaledL1):
    """``lambda_id * |G_AB(b) - b|_1``: a generator leaves images of its target domain
    unchanged, which keeps colours (the paper uses 0.5 times the cycle weight, 5)."""

    def __init__(self, weight: float = 5.0) -> None:
        super().__init__(weight)


class ImagePool:
    """A history of generated images the discriminator is trained on (Shrivastava et al.).

    Until the pool is full, every image is stored and returned. Then each image is, with
    probability 1/2, returned as is, or swapped with a random stored one that is returned
    instead. This damps oscillation: the discriminator also sees older generators' images.
    """

    def __init__(self, size: int = 50, seed: int | None = None) -> None:
        if size < 0:
            raise ValueError(f"the pool size must be >= 0, got {size}")
        self.size = size
        self.images: list = []
        self._random = random.Random(seed)

    def query(self, images):
        """Images to show the discriminator for a batch of generated ``images`` (NCHW)."""
        if self.size == 0:
            return images
        returned = []
        for image in images:
            image = image.expand_dims(0).copy()
            if len(self.images) < self.size:
                self.images.append(image)
                returned.append(image)
            elif self._random.random() < 0.5:
                index = self._random.randrange(self.size)
                returned.append(self.images[index])
                self.images[index] = image
            else:
                returned.append(image)
        return mx.nd.concat(*returned, dim=0)


def linear_decay(epoch: int, n_epochs: int, n_epochs_decay: int) -> float:
    """The learning-rate factor for 0-based ``epoch``: 1 for ``n_epochs`` epochs, then a
    linear decay towards 0 over ``n_epochs_decay`` more (100 and 100 in the paper).

    Examples
    --------
    >>> [round(linear_decay(e, 2, 3), 2) for e in range(5)]
    [1.0, 1.0, 0.75, 0.5, 0.25]
    """
    if n_epochs < 0 or n_epochs_decay < 0 or epoch < 0:
        raise ValueError("epochs must be non-negative")
    return 1.0 - max(0, epoch + 1 - n_epochs) / float(n_epochs_decay + 1)
