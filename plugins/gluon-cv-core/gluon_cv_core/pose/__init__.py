"""Top-down human pose estimation: models, specs and zoo data, the COCO keypoint names,
heatmap decoding, OKS metrics, the training recipe and ``train``
(``python -m gluon_cv_core.pose.train``) and ``predict``.
"""
