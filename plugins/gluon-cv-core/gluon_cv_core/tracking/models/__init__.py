"""Single-object tracking whose parameters load GluonCV 0.10's published SiamRPN file.

``siamrpn`` is the network (an AlexNet-style backbone shared by the template and the search
branch, and a region-proposal head that correlates them); ``tracker`` is the loop that crops
frames around the target, runs the network and turns its anchors' scores and offsets into one
box per frame. This package imports nothing itself, so specs can name it without mxnet.
"""
