"""SiamRPN with seeded random weights that track: what the tracker tests run."""

from __future__ import annotations

from typing import Any

import numpy as np

from gluon_hub.compat import mx

from .detection import randomize


def pixels(shape: tuple[int, ...], seed: int) -> Any:
    """Raw 0-255 pixel values, what the tracker feeds the network."""
    return mx.nd.array(np.random.RandomState(seed).uniform(0, 255, shape))


def calibrate(net: Any, seed: int = 0) -> None:
    """Random parameters, then the last convolutions scaled so that class logits spread by about 2
    and box offsets by about 0.2: with raw pixels in, plain random weights saturate every score
    and push every box off the frame, and the trackers would agree trivially."""
    randomize(net, seed=seed)
    z, x = pixels((1, 3, 127, 127), 0), pixels((1, 3, 287, 287), 1)
    for head, output, spread in ((net.rpn_head.cls.head[3], 0, 2.0), (net.rpn_head.loc.head[3], 1, 0.2)):
        values = net(z, x)[output].asnumpy()
        factor = spread / values.std()
        head.weight.set_data(head.weight.data() * factor)
        head.bias.set_data(head.bias.data() * factor)
