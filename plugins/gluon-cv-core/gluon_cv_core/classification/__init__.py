"""Image classification: the ImageNet and CIFAR zoos (``models``; ResNet, ResNet V1b and HRNet,
which other tasks build on, are in ``common.backbones``), their specs and zoo data, presets
(``transforms``), the class names (``labels``), ``train`` and ``evaluate``
(``python -m gluon_cv_core.classification.train``) and ``predict``.
"""
