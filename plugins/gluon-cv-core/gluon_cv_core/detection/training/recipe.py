"""The interface one detector family implements to be trained by ``train_detection``.

GluonCV wrote a separate training script per family; the families differ only in what a
training sample holds (SSD and YOLOv3 precompute box targets in the data workers, Faster
R-CNN and CenterNet need other arrays), how a batch is stacked, which losses are computed
and the schedule GluonCV trained with. A :class:`DetectionRecipe` holds exactly those
differences, so one script handles devices, the kvstore, schedules, checkpoints and
evaluation for all four.
"""

from __future__ import annotations

import abc
import importlib
from typing import Any, Callable, Sequence

import numpy as np

from gluon_hub.compat import mx

__all__ = ["DetectionRecipe", "recipe_for"]

Sample = tuple  # (CHW float32 image, *targets), as the train transform returns it
Transform = Callable[[Any, np.ndarray], Sample]

#: model-name prefix -> (module of this package, recipe class)
FAMILIES: dict[str, tuple[str, str]] = {
    "ssd_": ("ssd", "SSDRecipe"),
    "yolo3_": ("yolo3", "YOLO3Recipe"),
    "faster_rcnn_": ("faster_rcnn", "FasterRCNNRecipe"),
    "center_net_": ("center_net", "CenterNetRecipe"),
    # instance segmentation: trained by ``train_instance`` on COCO-format masks
    "mask_rcnn_": ("mask_rcnn", "MaskRCNNRecipe"),
    "custom_mask_rcnn_": ("mask_rcnn", "MaskRCNNRecipe"),
}


class DetectionRecipe(abc.ABC):
    """How one detector family trains.

    Parameters
    ----------
    net : the detector, initialized, on the training devices.
    data_shape : ``(width, height)`` of the training input for fixed-size families; ``None``
        for the family's default (Faster R-CNN resizes by its shorter side instead).
    seed : seeds the augmentations.
    options : family switches from the command line (for YOLOv3: ``mixup``,
        ``label_smoothing``); a recipe rejects options it does not know.
    """

    #: names of the losses :meth:`losses` returns, in order; the script logs them
    loss_names: tuple[str, ...] = ()
    #: GluonCV's schedule for this family: defaults for the script's ``lr``, ``lr_mode``,
    #: ``lr_decay``, ``lr_decay_epoch``, ``warmup_epochs``, ``wd``, ``momentum``, ``epochs``,
    #: ``optimizer``, ``batch_size``, ``data_shape``; the command line overrides each
    defaults: dict[str, Any] = {}

    def __init__(self, net: Any, data_shape: tuple[int, int] | None = None, seed: int | None = None,
                 **options: Any) -> None:
        if options:
            raise ValueError(f"{type(self).__name__} does not take the option(s) {', '.join(sorted(options))}")
        self.net = net
        self.data_shape = data_shape
        self.seed = seed

    @abc.abstractmethod
    def train_transform(self) -> Transform:
        """``(HWC uint8 image, label)`` -> one training sample, a tuple whose first item is
        the ``CHW`` float32 image. It runs in data-loader workers: it must pickle, and must
        not read the network's parameters (precompute what it needs, such as anchors)."""

    @abc.abstractmethod
    def batchify(self) -> Callable[[list[Sample]], tuple]:
        """Training samples -> a batch: a tuple of NDArrays with the samples on axis 0, so the
        script can split every item across devices."""

    @abc.abstractmethod
    def losses(self, batch: Sequence[Any]) -> list[Any]:
        """One device's part of a batch -> the losses named by :attr:`loss_names`, each a
        scalar NDArray normalised as the family's recipe does it. Runs under
        ``autograd.record()``; the script backpropagates their sum and averages the
        gradients over devices."""

    @abc.abstractmethod
    def val_transform(self) -> Transform:
        """The family's validation preset: ``(image, label)`` -> ``(CHW image, boxes)``
        with the boxes in the network input's pixels."""

    def val_batchify(self) -> Callable[[list[Sample]], tuple]:
        """Validation samples -> ``(images, labels, *rest)``: images zero-padded to the
        largest in the batch (a no-op for fixed-size presets), labels padded with rows of
        -1, further items (Faster R-CNN's scale) stacked."""
        return pad_images_and_labels

    def training_data(self, samples: Any) -> Any:
        """The checked training samples (a :class:`~.samples.TrainingSamples`) -> the
        dataset the loader reads: by default the samples through :meth:`train_transform`
        (YOLOv3 mixes image pairs here)."""
        return samples.transform(self.train_transform())

    def batch_sampler(self, sampler: Any, batch_size: int) -> Any:
        """The loader's batches: ``sampler``'s keys, ``batch_size`` at a time, the last
        incomplete batch dropped (YOLOv3 draws its multi-scale size here)."""
        return mx.gluon.data.BatchSampler(sampler, batch_size, "discard")

    def begin_epoch(self, epoch: int, num_epochs: int) -> None:  # noqa: B027  (optional hook)
        """Called before each epoch (0-based), e.g. to stop mixup for the last epochs."""

    def prepare(self) -> None:  # noqa: B027  (optional hook)
        """Called once before the trainer is made, e.g. to set parameters' ``wd_mult`` as
        the family's recipe does; by default nothing."""


def pad_images_and_labels(samples: list[Sample]) -> tuple[Any, ...]:
    """Stack ``(CHW image, (N, k) label, *rest)`` samples: images zero-padded at the bottom
    and right to the batch's largest, labels padded with rows of -1 to the most objects,
    each further item stacked as it is."""
    images = [_numpy(s[0]) for s in samples]
    labels = [np.asarray(s[1], dtype=np.float32) for s in samples]
    height, width = max(i.shape[1] for i in images), max(i.shape[2] for i in images)
    batch = np.zeros((len(images), images[0].shape[0], height, width), dtype=np.float32)
    for k, image in enumerate(images):
        batch[k, :, :image.shape[1], :image.shape[2]] = image
    columns = max((lab.shape[1] for lab in labels), default=6)
    rows = max(max(lab.shape[0] for lab in labels), 1)
    padded = -np.ones((len(labels), rows, columns), dtype=np.float32)
    for k, lab in enumerate(labels):
        padded[k, :lab.shape[0], :lab.shape[1]] = lab
    rest = [mx.nd.array(np.stack([_numpy(s[k]) for s in samples])) for k in range(2, len(samples[0]))]
    return (mx.nd.array(batch), mx.nd.array(padded), *rest)


def _numpy(value: Any) -> np.ndarray:
    return value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)


def family_of(model: str) -> str:
    """The family prefix of a detection model name (``"ssd_"``, ``"yolo3_"``, ...)."""
    for prefix in FAMILIES:
        if model.startswith(prefix):
            return prefix
    raise ValueError(f"{model!r} is not a trainable detector; detection names start with "
                     f"{', '.join(FAMILIES)}")


def recipe_for(model: str, net: Any, **kwargs: Any) -> DetectionRecipe:
    """The recipe that trains ``net``, chosen by its model name."""
    module, cls = FAMILIES[family_of(model)]
    return getattr(importlib.import_module(f"{__package__}.{module}"), cls)(net, **kwargs)
