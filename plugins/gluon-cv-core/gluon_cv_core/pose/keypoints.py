"""The 17 COCO person keypoints, in the order of the COCO annotations and of every model's heatmaps."""

from __future__ import annotations

__all__ = ["COCO_KEYPOINTS", "COCO_SKELETON", "COCO_FLIP_PAIRS"]

COCO_KEYPOINTS = (
    "nose", "left_eye", "right_eye", "left_ear", "right_ear",
    "left_shoulder", "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist",
    "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle",
)

#: limbs as pairs of 0-based keypoint indices (COCO's ``skeleton`` counts from 1): what drawing connects
COCO_SKELETON = (
    (15, 13), (13, 11), (16, 14), (14, 12), (11, 12), (5, 11), (6, 12), (5, 6), (5, 7),
    (6, 8), (7, 9), (8, 10), (1, 2), (0, 1), (0, 2), (1, 3), (2, 4), (3, 5), (4, 6),
)

#: left/right keypoints that swap when an image is mirrored (flip testing, flip augmentation)
COCO_FLIP_PAIRS = ((1, 2), (3, 4), (5, 6), (7, 8), (9, 10), (11, 12), (13, 14), (15, 16))
