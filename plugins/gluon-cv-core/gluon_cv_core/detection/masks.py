"""Mask R-CNN's box masks pasted onto the image, in numpy and Pillow (no MXNet): what
``gluon-hub predict``, the COCO mask evaluation and the ONNX runner share."""

from __future__ import annotations

import numpy as np

__all__ = ["paste_masks"]


def paste_masks(masks: np.ndarray, boxes: np.ndarray, size: tuple[int, int], threshold: float = 0.5) -> np.ndarray:
    """Full-image binary masks ``(N, H, W)`` from ``(N, M, M)`` box masks and ``(N, 4)`` boxes.

    GluonCV's ``expand_mask`` semantics, vectorized: each mask gets a one-cell zero border,
    its box is widened by the same margin (by ``(M + 2) / M``) and rounded to integer pixels
    (at least 1x1; GluonCV fails on smaller), the bordered mask is resized bilinearly (PIL)
    onto that box, thresholded (``> threshold``) and clipped to the ``size = (H, W)`` image.
    """
    masks, boxes = np.asarray(masks, dtype=np.float32), np.asarray(boxes, dtype=np.float32)
    if masks.ndim != 3 or masks.shape[1] != masks.shape[2] or boxes.shape != (len(masks), 4):
        raise ValueError(f"paste_masks needs (N, M, M) masks and (N, 4) boxes, got {masks.shape} and {boxes.shape}")
    height, width = size
    out = np.zeros((len(masks), height, width), dtype=np.uint8)
    side = masks.shape[1]
    padded = np.zeros((len(masks), side + 2, side + 2), dtype=np.float32)
    padded[:, 1:-1, 1:-1] = masks
    scale = (side + 2.0) / side
    half_w = (boxes[:, 2] - boxes[:, 0]) * 0.5 * scale
    half_h = (boxes[:, 3] - boxes[:, 1]) * 0.5 * scale
    cx, cy = (boxes[:, 2] + boxes[:, 0]) * 0.5, (boxes[:, 3] + boxes[:, 1]) * 0.5
    corners = np.round(np.stack([cx - half_w, cy - half_h, cx + half_w, cy + half_h], axis=1)).astype(np.int64)
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("paste_masks resizes with Pillow, which is not installed: pip install Pillow") from None
    for i, (x1, y1, x2, y2) in enumerate(corners):
        w, h = max(x2 - x1 + 1, 1), max(y2 - y1 + 1, 1)
        resized = np.asarray(Image.fromarray(padded[i]).resize((w, h), Image.BILINEAR)) > threshold
        ox1, oy1, ox2, oy2 = max(x1, 0), max(y1, 0), min(x2 + 1, width), min(y2 + 1, height)
        if ox2 > ox1 and oy2 > oy1:
            out[i, oy1:oy2, ox1:ox2] = resized[oy1 - y1:oy2 - y1, ox1 - x1:ox2 - x1]
    return out
