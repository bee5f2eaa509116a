"""Top-down human pose estimation whose parameters load GluonCV 0.10's published files.

A person crop goes in, one heatmap per keypoint comes out. ``simple_pose`` (ResNet plus
deconvolutions), ``mobile_pose`` (light backbones plus pixel-shuffle upsampling) and
``alpha_pose`` (an SE-ResNet plus pixel shuffle) are the families; ``layers`` holds the
upsampling block two of them share, ``decode`` turns heatmaps into image coordinates and
``keypoints`` names the COCO joints. This package imports nothing itself, so specs can point
at ``keypoints`` without mxnet.
"""
