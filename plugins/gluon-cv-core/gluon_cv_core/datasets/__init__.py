"""Datasets, one module per dataset, read through ``gluon_hub.load_dataset`` or directly:
``cifar``, ``folder`` (ImageNet-style image folders), ``voc`` (detection, VOC 2012 and SBD
segmentation), ``coco`` (detection, segmentation onto the VOC classes, Mask R-CNN instances),
``coco_keypoints``, ``ade20k``, ``cityscapes``, ``packed`` (GluonCV's ``.lst`` and RecordIO
detection files), ``video`` (Kinetics, UCF101, HMDB51, Something-Something), ``kitti`` and
``otb``; ``masks`` is the semantic datasets' base class, ``archives`` extracts archives once,
and ``specs`` lists the datasets for the hub. Importing a module imports mxnet; the plugin's
entry point never does.
"""
