"""Object detection (SSD, YOLOv3, Faster R-CNN, CenterNet) and instance segmentation.

Mask R-CNN lives here, not in ``segmentation``: it is Faster R-CNN with a mask head, and shares
its backbone, region proposals, feature pyramid, training recipe and COCO evaluation with
the detectors (``models.mask_rcnn``, ``training.mask_rcnn``, ``instance_metrics``,
``instance_predict``, ``masks``, ``train_instance``). Its specs stay with the other segmentation specs
(``segmentation/mask_rcnn_zoo.json``).

``models`` holds the networks, ``training`` one recipe per family, ``presets`` the
transforms, ``metrics`` VOC and COCO mAP, ``train`` and ``evaluate`` the scripts
(``python -m gluon_cv_core.detection.train``), ``predict`` the ``gluon-hub predict`` module and
``onnx_runner`` the ONNX runners of the detectors and Mask R-CNN (numpy, no MXNet).
"""
