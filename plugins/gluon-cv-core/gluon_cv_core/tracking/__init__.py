"""Single-object tracking (SiamRPN): the network, the tracking loop, specs and zoo data and
``predict``.
"""
