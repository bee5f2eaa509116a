"""Video action recognition (TSN, I3D, SlowFast, R(2+1)D, P3D, C3D): models, specs and zoo data,
clip sampling and video transforms, class names, ``train``
(``python -m gluon_cv_core.action.train``) and ``predict``.
"""
