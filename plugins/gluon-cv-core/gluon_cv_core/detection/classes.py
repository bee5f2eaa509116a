"""Class names of the detection datasets, in the order of the published models' outputs."""

from __future__ import annotations

from typing import Any, Sequence

#: PASCAL VOC 2007/2012, the 20 classes in the dataset's alphabetical order
VOC_CLASSES: tuple[str, ...] = (
    'aeroplane', 'bicycle', 'bird', 'boat', 'bottle', 'bus', 'car', 'cat', 'chair', 'cow',
    'diningtable', 'dog', 'horse', 'motorbike', 'person', 'pottedplant', 'sheep', 'sofa',
    'train', 'tvmonitor',
)

#: COCO 2017, the 80 classes in category-id order
COCO_CLASSES: tuple[str, ...] = (
    'person', 'bicycle', 'car', 'motorcycle', 'airplane', 'bus', 'train', 'truck', 'boat',
    'traffic light', 'fire hydrant', 'stop sign', 'parking meter', 'bench', 'bird', 'cat',
    'dog', 'horse', 'sheep', 'cow', 'elephant', 'bear', 'zebra', 'giraffe', 'backpack',
    'umbrella', 'handbag', 'tie', 'suitcase', 'frisbee', 'skis', 'snowboard', 'sports ball',
    'kite', 'baseball bat', 'baseball glove', 'skateboard', 'surfboard', 'tennis racket',
    'bottle', 'wine glass', 'cup', 'fork', 'knife', 'spoon', 'bowl', 'banana', 'apple',
    'sandwich', 'orange', 'broccoli', 'carrot', 'hot dog', 'pizza', 'donut', 'cake', 'chair',
    'couch', 'potted plant', 'bed', 'dining table', 'toilet', 'tv', 'laptop', 'mouse', 'remote',
    'keyboard', 'cell phone', 'microwave', 'oven', 'toaster', 'sink', 'refrigerator', 'book',
    'clock', 'vase', 'scissors', 'teddy bear', 'hair drier', 'toothbrush',
)

#: dataset name -> class names, as the factories' ``classes="voc"`` shorthand
BY_DATASET: dict[str, tuple[str, ...]] = {"voc": VOC_CLASSES, "coco": COCO_CLASSES}


def keep_named_classes(net: Any, classes: str | Sequence[str]) -> tuple[list[str], list[str]]:
    """GluonCV's ``reset_class`` for ``gluon_hub.load(detector, pretrained=True, classes=[...])``:
    the predictors are re-created for ``classes`` and the rows of every class the published
    model also has (by name) are copied over, the background's too. Returns the parameters
    re-created and the classes kept."""
    names = BY_DATASET.get(classes, classes) if isinstance(classes, str) else tuple(classes)
    if isinstance(names, str) or not names:
        raise ValueError(f"classes must be 'voc', 'coco' or a non-empty list of names, got {classes!r}")
    kept = [c for c in names if c in net.classes]
    before = {key: param.shape for key, param in net._collect_params_with_prefix().items()}
    net.reset_class(names, reuse_weights=kept)
    after = net._collect_params_with_prefix()
    return [key for key, param in after.items() if before.get(key) != param.shape], kept
