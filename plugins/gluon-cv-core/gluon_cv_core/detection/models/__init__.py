"""Object-detection architectures whose parameters load GluonCV 0.10's published files.

``boxes`` holds the shared anchor, box-coding and NMS operators; ``features`` adapts the
plugin's classification networks as multi-scale backbones; one module per detector family
(Faster R-CNN's region proposal network and feature pyramid sit beside it in ``rpn`` and ``fpn``).
This package imports nothing itself, so specs can point at ``classes`` without mxnet.
"""
