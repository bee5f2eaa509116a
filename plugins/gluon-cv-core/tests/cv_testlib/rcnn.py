"""Faster R-CNN family parity tests' sizes: fewer proposals and samples than GluonCV's defaults,
set alike on GluonCV's network (whose constructors do not take them) and on ours."""

from __future__ import annotations

from typing import Any

from gluon_hub.compat import mx  # noqa: F401  (restores numpy aliases before gluoncv loads)

from gluoncv.model_zoo.rcnn.faster_rcnn.rcnn_target import RCNNTargetGenerator  # noqa: E402

#: proposals per image in inference, and for training: proposals kept, regions sampled
TEST_PROPOSALS, TRAIN_PROPOSALS, SAMPLES = 16, 48, 16


def shrink(reference: Any, batch: int) -> None:
    """Fewer proposals and samples in GluonCV's network (its constructors do not take them)."""
    reference._rpn_test_post_nms = reference.rpn._test_post_nms = TEST_PROPOSALS
    reference.rpn._train_post_nms = reference.sampler._num_proposal = TRAIN_PROPOSALS
    reference._num_sample = reference.sampler._num_sample = SAMPLES
    reference.sampler._max_pos = int(round(SAMPLES * 0.25))
    reference._batch_size = reference.sampler._num_image = batch
    reference._target_generator = lambda: RCNNTargetGenerator(reference.num_class, reference.sampler._max_pos, batch)


def shrunk_options(batch: int) -> dict[str, int]:
    """The same sizes as keyword arguments of our factories."""
    return dict(rpn_test_post_nms=TEST_PROPOSALS, rpn_train_post_nms=TRAIN_PROPOSALS, num_sample=SAMPLES,
                per_device_batch_size=batch)
