"""What the detection training and evaluation scripts share: where the data comes from,
and evaluation with the metric GluonCV reports for each dataset.

Data comes from one of three sources:

* ``--dataset voc`` or ``--dataset coco``: the hub's datasets, from ``--data-root`` or the
  cache (segments such as ``2007_trainval+2012_trainval`` / ``2007_test``, ``train`` / ``val``);
* ``--voc-root DIR --classes a,b``: your own data in the VOC layout, segments written
  ``FOLDER/IMAGESET`` (``DIR/FOLDER/ImageSets/Main/IMAGESET.txt``);
* ``--train-file`` / ``--val-file``: GluonCV's ``.lst`` or RecordIO (``.rec``) files.

VOC-style data is scored with the VOC2007 11-point mAP, as GluonCV's scripts score VOC;
COCO with ``pycocotools`` (IoU 0.50:0.95), after mapping the boxes back to each original
image. The VOC metric compares boxes in the frame the network saw, as GluonCV's SSD, YOLOv3
and CenterNet scripts do; Faster R-CNN's validation preset reports its scale, and its
boxes and labels are compared in the original image, as GluonCV's Faster R-CNN script does.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from gluon_hub.compat import mx

from ..common import norm

#: default (train, val) segments of the hub's detection datasets
SEGMENTS = {"voc": ("2007_trainval+2012_trainval", "2007_test"), "coco": ("train", "val")}


class SyncBatchNorm(norm.SyncBatchNorm):
    """The models' SyncBatchNorm under BatchNorm's name: SSD's backbones are traced into a
    symbol whose parameter names come from the layers' names, so with this class a
    network built for ``--syncbn`` still loads the published (BatchNorm) files."""

    def _alias(self) -> str:
        return "batchnorm"


def add_detection_data_arguments(parser: argparse.ArgumentParser, train: bool = True) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", choices=sorted(SEGMENTS), help="a hub detection dataset")
    source.add_argument("--voc-root", metavar="DIR", help="your own data in the VOC layout (give --classes)")
    source.add_argument("--val-file", metavar="FILE", help="a .lst or .rec file to validate on (give --classes)")
    parser.add_argument("--data-root", help="with --dataset: the folder that holds its files (default: the cache)")
    if train:
        parser.add_argument("--train-segment", help="segment to train on (default: the dataset's training set)")
        parser.add_argument("--train-file", metavar="FILE", help="with --val-file: a .lst or .rec file to train on")
    parser.add_argument("--val-segment", help="segment to evaluate on (default: the dataset's validation set)")
    parser.add_argument("--classes", help="comma-separated class names, for --voc-root and .lst/.rec files")
    parser.add_argument("--batch-size", type=int, help="images per device per step (default: the family's)")
    parser.add_argument("-j", "--num-workers", type=int, default=4, help="data loading processes")
    parser.add_argument("--ctx", default="cpu", help="devices, e.g. cpu or gpu0,gpu1,gpu2,gpu3")


def _classes(args: argparse.Namespace) -> tuple[str, ...]:
    if not args.classes:
        raise ValueError("--voc-root and .lst/.rec data need --classes (comma-separated names, in label order)")
    return tuple(name.strip() for name in args.classes.split(",") if name.strip())


def load_detection_split(args: argparse.Namespace, which: str) -> Any:
    """The ``which`` ("train" or "val") dataset the arguments name; its items are
    ``(HWC uint8 image, (N, 5+) label)`` and it has ``classes``."""
    from ..datasets.coco import coco
    from ..datasets.packed import LstDetection, RecordFileDetection
    from ..datasets.voc import VOCDetection, voc

    segment = getattr(args, f"{which}_segment", None)
    if args.dataset:
        segment = segment or SEGMENTS[args.dataset][which == "val"]
        return (voc if args.dataset == "voc" else coco)(args.data_root, segment)
    if args.voc_root:
        if not segment:
            raise ValueError(f"--voc-root needs --{which}-segment FOLDER/IMAGESET, e.g. VOC2007/{which}")
        splits = []
        for part in segment.split("+"):
            folder, _, image_set = part.rpartition("/")
            if not folder or not image_set:
                raise ValueError(f"segment {part!r}: write FOLDER/IMAGESET, e.g. VOC2007/{which}")
            splits.append((folder, image_set))
        return VOCDetection(args.voc_root, splits, classes=_classes(args))
    path = getattr(args, f"{which}_file", None)
    if not path:
        raise ValueError(f"--val-file needs --{which}-file too")
    reader = RecordFileDetection if Path(path).suffix == ".rec" else LstDetection
    dataset = reader(path)
    dataset.classes = _classes(args)
    return dataset


def detection_metric(dataset: Any, family: str, data_shape: tuple[int, int] | None) -> Any:
    """COCO mAP for COCO data, else the VOC2007 11-point mAP (GluonCV's choices)."""
    from ..datasets.coco import COCODetection
    from .metrics import COCODetectionMetric, VOC07MApMetric

    if not isinstance(dataset, COCODetection):
        return VOC07MApMetric(iou_thresh=0.5, class_names=list(dataset.classes))
    if family in ("faster_rcnn_", "mask_rcnn_", "custom_mask_rcnn_"):  # Mask R-CNN: its boxes only
        return COCODetectionMetric(dataset)  # boxes are scaled back before update
    width, height = data_shape
    if family == "center_net_":
        from .presets import centernet_inverse_affine

        return COCODetectionMetric(dataset, data_shape=(height, width), post_affine=centernet_inverse_affine)
    return COCODetectionMetric(dataset, data_shape=(height, width))


def evaluate_detector(net: Any, dataset: Any, recipe: Any, metric: Any, batch_size: int, ctx: Sequence[Any],
                      num_workers: int = 0) -> dict[str, float]:
    """Run ``net`` over ``dataset`` through the recipe's validation preset and score it.

    Returns ``{"mAP": ..., "AP/<class>": ...}``.
    """
    data = dataset.transform(recipe.val_transform())
    loader = mx.gluon.data.DataLoader(data, batch_size * len(ctx), shuffle=False, last_batch="keep",
                                      batchify_fn=recipe.val_batchify(), num_workers=num_workers)
    metric.reset()
    for batch in loader:
        images, labels = batch[0], batch[1]
        parts = mx.gluon.utils.split_and_load(images, ctx, even_split=False)
        outputs = [net(x) for x in parts]
        ids = np.concatenate([o[0].asnumpy() for o in outputs])
        scores = np.concatenate([o[1].asnumpy() for o in outputs])
        boxes = np.concatenate([o[2].asnumpy() for o in outputs])
        gt = labels.asnumpy()
        if len(batch) > 2:  # Faster R-CNN: back to the original image
            scale = batch[2].asnumpy().reshape(-1, 1, 1)
            boxes = boxes * scale
            gt = gt.copy()
            gt[:, :, :4] = np.where(gt[:, :, 4:5] >= 0, gt[:, :, :4] * scale, gt[:, :, :4])
        difficult = gt[:, :, 5:6] if gt.shape[2] > 5 else None
        metric.update(boxes, ids, scores, gt[:, :, :4], gt[:, :, 4:5], difficult)
    names, values = metric.get()
    result = {"mAP": float(values[-1])}
    result.update({f"AP/{name}": float(value) for name, value in zip(names[:-1], values[:-1])})
    return result
