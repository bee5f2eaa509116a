"""Semantic segmentation (FCN, PSPNet, DeepLab, DANet, ICNet, Fast-SCNN) and Mask R-CNN."""
