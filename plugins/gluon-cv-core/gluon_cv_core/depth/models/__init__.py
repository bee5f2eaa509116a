"""Self-supervised monocular depth (Monodepth2) whose parameters load GluonCV 0.10's published files.

``monodepth2`` is the depth network (ResNet encoder, a decoder that predicts a disparity map
at four scales); ``monodepth2_posenet`` is the camera-motion network trained beside it (the
same encoder over two stacked frames, a small convolutional pose head). This package imports
nothing itself, so specs can point into it without mxnet.
"""
