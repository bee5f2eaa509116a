"""The SiamRPN tracker in MXNet: the numpy loop of :mod:`.loop` with the network in MXNet.

Crops are resized with MXNet's OpenCV bilinear resize, the resize GluonCV's tracker used; the
template's backbone features are computed once, at :meth:`~.loop.SiamRPNLoop.init`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gluon_hub.compat import mx

from .loop import SiamRPNLoop, TrackedBox, anchor_grid

__all__ = ["SiamRPNTracker", "TrackedBox", "anchor_grid"]


class SiamRPNTracker(SiamRPNLoop):
    """Follow one object through a video with a SiamRPN network.

    Parameters
    ----------
    net : a :class:`~.siamrpn.SiamRPN` (hybridize it first for speed).
    ctx : device of the network's inputs.
    **loop : the tracking hyper-parameters and crop sizes of :class:`~.loop.SiamRPNLoop`.

    Examples
    --------
    >>> tracker = SiamRPNTracker(net)                       # doctest: +SKIP
    >>> tracker.init(first_frame, (20, 30, 60, 90))        # doctest: +SKIP
    >>> [tracker.update(frame).box for frame in rest]      # doctest: +SKIP
    """

    def __init__(self, net: Any, ctx: Any = None, **loop: Any) -> None:
        super().__init__(**loop)
        self.net = net
        self.ctx = ctx or mx.cpu()

    def network_input(self, patch: np.ndarray, out_size: int) -> Any:
        """``patch`` resized by MXNet (OpenCV's bilinear): a (1, 3, out, out) float32 array on ``self.ctx``."""
        array = mx.nd.array(patch, dtype=np.uint8)
        if patch.shape[0] != out_size:
            array = mx.image.imresize(array, out_size, out_size, interp=1)
        return array.transpose((2, 0, 1)).expand_dims(0).astype(np.float32).as_in_context(self.ctx)

    def template(self, crop: Any) -> Any:
        """The template's backbone features, computed once."""
        return self.net.template(crop)

    def scores(self, crop: Any, template: Any) -> tuple[np.ndarray, np.ndarray]:
        cls, loc = self.net.track(crop, template)
        return cls.asnumpy(), loc.asnumpy()
