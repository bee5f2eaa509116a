"""Networks that several tasks build on: the ResNet families (``resnet``, ``resnetv1b``) and
HRNet, which are also classification models of their own, and ``features``, which turns any
registered classification network into a multi-scale backbone by name.
"""
