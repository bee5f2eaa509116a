"""Vision data: preprocessing presets, image folders, CIFAR, and top-k accuracy.

Detection has modules of its own: ``detection_datasets`` (VOC, COCO, ``.lst``/RecordIO),
``detection_presets`` (SSD, YOLOv3, Faster R-CNN, CenterNet transforms) and
``detection_metrics`` (VOC and COCO mAP). Importing this package imports mxnet; the
plugin's entry point never does.
"""

from __future__ import annotations

from .cifar import CIFAR10, CIFAR100
from .folder import ImageFolderDataset, imagenet
from .images import read_image
from .metrics import TopKAccuracy, topk_correct
from .transforms import Geometry, RandomPadCrop, eval_transform, geometry, train_transform

__all__ = [
    "CIFAR10",
    "CIFAR100",
    "Geometry",
    "ImageFolderDataset",
    "RandomPadCrop",
    "TopKAccuracy",
    "eval_transform",
    "geometry",
    "imagenet",
    "read_image",
    "topk_correct",
    "train_transform",
]
