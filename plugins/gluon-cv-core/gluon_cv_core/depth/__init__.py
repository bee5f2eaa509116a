"""Monocular depth (Monodepth2 and its pose network): models, specs and zoo data, KITTI depth
metrics and ``predict``.
"""
