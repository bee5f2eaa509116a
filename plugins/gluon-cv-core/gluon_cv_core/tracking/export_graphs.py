"""The two graphs SiamRPN is exported as (``ModelSpec.export_graphs`` names :func:`siamrpn_graphs`).

A tracker computes the template's features once per object and scores every frame's search
crop against them, as the MXNet tracker does (:meth:`.models.siamrpn.SiamRPN.template`, then
``track``). Exported as one graph of both crops, the template's backbone would run again with
every frame; as ``template`` (crop -> features) and ``search`` (features, crop -> cls, loc), the
ONNX runner keeps the features between frames and does the MXNet tracker's work, no more.
"""

from __future__ import annotations

from typing import Any, Sequence

from gluon_hub.specs import ExportGraph

from ..common.blocks import HybridBlock
from .geometry import FEATURES, feature_size
from .models.siamrpn import SiamRPN

__all__ = ["SearchScores", "TemplateFeatures", "siamrpn_graphs"]

#: the search crop's side when tracking (GluonCV's instance size); the graph leaves it free
SEARCH = 287


class TemplateFeatures(HybridBlock):
    """Template crops ``(N, 3, T, T)`` -> the backbone's features ``(N, 256, F, F)``."""

    def __init__(self, net: SiamRPN, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.backbone = net.backbone  # its parameters only: the head's are the search graph's

    def hybrid_forward(self, F, template):
        return self.backbone(template)


class SearchScores(HybridBlock):
    """Template features and search crops ``(N, 3, S, S)`` -> ``(cls, loc)``, as ``net.track``."""

    def __init__(self, net: SiamRPN, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.backbone = net.backbone
        self.rpn_head = net.rpn_head

    def hybrid_forward(self, F, features, search):
        return self.rpn_head(features, self.backbone(search))


def siamrpn_graphs(net: SiamRPN, input_shape: Sequence[Any] | None = None) -> list[ExportGraph]:
    """``template`` and ``search`` graphs of ``net``, batch free, the search crop's side free.

    ``input_shape`` is the template crops' shape ``(N, 3, T, T)`` (default ``(1, 3, 127, 127)``
    for the network's ``template_size``), or the two crops' shapes (template, search) to trace
    the search graph at another size than 287.
    """
    side = net.template_size
    shapes = [tuple(s) for s in input_shape] if input_shape and not isinstance(input_shape[0], int) else \
        [tuple(input_shape or (1, 3, side, side))]
    template = shapes[0]
    search = shapes[1] if len(shapes) > 1 else (template[0], 3, SEARCH, SEARCH)
    if len(shapes) > 2 or len(template) != 4 or template[1:] != (3, side, side) or len(search) != 4 or search[1] != 3:
        raise ValueError(f"SiamRPN exports at (template, search) crop shapes ((N, 3, {side}, {side}), (N, 3, S, S)), "
                         f"got {shapes}")
    grid = feature_size(side)
    return [
        ExportGraph("template", TemplateFeatures(net), (template,), ("float32",), ((None, 3, side, side),)),
        ExportGraph("search", SearchScores(net), ((search[0], FEATURES, grid, grid), search), ("float32", "float32"),
                    ((None, FEATURES, grid, grid), (None, 3, None, None))),
    ]
