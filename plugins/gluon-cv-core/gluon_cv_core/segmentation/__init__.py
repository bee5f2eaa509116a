"""Semantic segmentation (FCN, PSPNet, DeepLab, DANet, ICNet, Fast-SCNN, HRNet): models, specs
and zoo data, transforms, metrics, multi-scale evaluation, ``train`` and ``evaluate``
(``python -m gluon_cv_core.segmentation.train``) and ``predict``.

Instance segmentation (Mask R-CNN) is in ``detection``, beside the R-CNN code it extends;
its zoo rows are listed here with the other segmentation specs.
"""
