"""Datasets by dataset, read through ``gluon_hub.load_dataset`` or directly: ``cifar``, ``folder``
(ImageNet-style image folders), ``detection`` (VOC, COCO, ``.lst``/RecordIO), ``segmentation``
(VOC, SBD, ADE20K, Cityscapes, COCO instances), ``coco_keypoints``, ``video`` (Kinetics, UCF101,
HMDB51, Something-Something), ``kitti`` and ``otb``; ``specs`` lists them for the hub.
Importing a module imports mxnet; the plugin's entry point never does.
"""
