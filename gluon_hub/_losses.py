"""Loss blocks of the core; see :mod:`gluon_hub.losses` for their registered names.

Each is a hybridizable ``mxnet.gluon.loss.Loss``: ``loss(pred, label[, ...])`` returns one
value per sample (the mean over every axis but ``batch_axis``), scaled by ``weight`` and
by the optional ``sample_weight`` (broadcastable to the per-element loss) as Gluon's own
losses are.
"""

from __future__ import annotations

from typing import Any

from gluon_hub.compat import mx

__all__ = ["LabelSmoothingCELoss", "SoftTargetCELoss", "FocalLoss", "MaskedSoftmaxCELoss"]

def _weighted(F: Any, loss: Any, weight: float | None, sample_weight: Any) -> Any:
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        loss = loss * weight
    return loss


def _check_weight(weight: Any) -> None:
    if weight is not None and not isinstance(weight, (int, float)):
        raise TypeError(f"weight must be a number or None, got {weight!r}")


class LabelSmoothingCELoss(mx.gluon.loss.Loss):
    r"""Softmax cross-entropy against integer labels smoothed towards the uniform distribution.

    The target is :math:`q = (1 - \epsilon)\,\mathrm{onehot}(y) + \epsilon / K` over the
    :math:`K` classes, so :math:`L = -(1 - \epsilon) \log p_y - \frac{\epsilon}{K} \sum_k \log p_k`
    (Szegedy et al., 2016). ``epsilon=0`` is plain softmax cross-entropy.

    Parameters
    ----------
    epsilon : the smoothing, in [0, 1).
    axis : the class axis of ``pred``.
    from_logits : ``pred`` already holds log-probabilities.
    weight : a global scale of the loss.
    batch_axis : the batch axis.
    prefix, params : as for any Gluon block.

    Examples
    --------
    >>> from gluon_hub.compat import mx
    >>> loss = LabelSmoothingCELoss(epsilon=0.1)
    >>> loss(mx.nd.array([[2.0, 0.0, 0.0]]), mx.nd.array([0])).shape
    (1,)
    """

    def __init__(self, epsilon: float = 0.1, axis: int = -1, from_logits: bool = False,
                 weight: float | None = None, batch_axis: int = 0, prefix: str | None = None,
                 params: Any = None) -> None:
        if not 0 <= epsilon < 1:
            raise ValueError(f"epsilon must be in [0, 1), got {epsilon!r}")
        _check_weight(weight)
        super().__init__(weight, batch_axis, prefix=prefix, params=params)
        self._epsilon = float(epsilon)
        self._axis = axis
        self._from_logits = from_logits

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        logp = pred if self._from_logits else F.log_softmax(pred, axis=self._axis)
        picked = F.pick(logp, label, axis=self._axis, keepdims=True)
        uniform = F.mean(logp, axis=self._axis, keepdims=True)
        loss = -(1 - self._epsilon) * picked - self._epsilon * uniform
        loss = _weighted(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class SoftTargetCELoss(mx.gluon.loss.Loss):
    r"""Softmax cross-entropy against probability targets, :math:`L = -\sum_k q_k \log p_k`.

    For mixup and cutmix (targets mixing two one-hot labels) and for distillation
    (a teacher's probabilities). ``label`` has the shape of ``pred``.

    Parameters
    ----------
    axis : the class axis of ``pred`` and ``label``.
    from_logits : ``pred`` already holds log-probabilities.
    weight : a global scale of the loss.
    batch_axis : the batch axis.
    prefix, params : as for any Gluon block.
    """

    def __init__(self, axis: int = -1, from_logits: bool = False, weight: float | None = None,
                 batch_axis: int = 0, prefix: str | None = None, params: Any = None) -> None:
        _check_weight(weight)
        super().__init__(weight, batch_axis, prefix=prefix, params=params)
        self._axis = axis
        self._from_logits = from_logits

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        logp = pred if self._from_logits else F.log_softmax(pred, axis=self._axis)
        loss = -F.sum(logp * label, axis=self._axis, keepdims=True)
        loss = _weighted(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class FocalLoss(mx.gluon.loss.Loss):
    r"""Softmax focal loss, :math:`L = -\alpha (1 - p_y)^\gamma \log p_y` (Lin et al., 2017).

    Well-classified examples (:math:`p_y` near 1) contribute little, so training focuses
    on hard ones; ``gamma=0, alpha=1`` is softmax cross-entropy. Labels are integers.

    Parameters
    ----------
    gamma : the focusing exponent (>= 0).
    alpha : a scale of the loss (the class-balance weight of the paper).
    axis : the class axis of ``pred``.
    from_logits : ``pred`` already holds log-probabilities.
    weight : a global scale of the loss.
    batch_axis : the batch axis.
    prefix, params : as for any Gluon block.
    """

    def __init__(self, gamma: float = 2.0, alpha: float = 1.0, axis: int = -1, from_logits: bool = False,
                 weight: float | None = None, batch_axis: int = 0, prefix: str | None = None,
                 params: Any = None) -> None:
        if not gamma >= 0:
            raise ValueError(f"gamma must be >= 0, got {gamma!r}")
        _check_weight(weight)
        super().__init__(weight, batch_axis, prefix=prefix, params=params)
        self._gamma = float(gamma)
        self._alpha = float(alpha)
        self._axis = axis
        self._from_logits = from_logits

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        logp = pred if self._from_logits else F.log_softmax(pred, axis=self._axis)
        logp_y = F.pick(logp, label, axis=self._axis, keepdims=True)
        # relu keeps 1 - p_y >= 0 where rounding makes exp(log p_y) exceed 1.
        loss = -self._alpha * F.relu(1 - F.exp(logp_y)) ** self._gamma * logp_y
        loss = _weighted(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class MaskedSoftmaxCELoss(mx.gluon.loss.Loss):
    r"""Softmax cross-entropy over padded sequences: steps past each valid length count 0.

    ``loss(pred, label, valid_length)`` with ``pred`` of shape (N, T, C), integer ``label``
    of shape (N, T) and ``valid_length`` of shape (N,). Each sample's loss is the sum of its
    valid steps' cross-entropy divided by T, the padded length, as GluonNLP's
    ``MaskedSoftmaxCELoss`` computes it (divide by ``valid_length / T`` for a per-token mean).

    Parameters
    ----------
    from_logits : ``pred`` already holds log-probabilities.
    weight : a global scale of the loss.
    prefix, params : as for any Gluon block.
    """

    def __init__(self, from_logits: bool = False, weight: float | None = None, prefix: str | None = None,
                 params: Any = None) -> None:
        _check_weight(weight)
        super().__init__(weight, 0, prefix=prefix, params=params)
        self._from_logits = from_logits

    def hybrid_forward(self, F: Any, pred: Any, label: Any, valid_length: Any) -> Any:
        logp = pred if self._from_logits else F.log_softmax(pred, axis=-1)
        loss = -F.pick(logp, label, axis=-1)  # (N, T)
        # SequenceMask masks along axis 0 or 1 of (T, N, ...) / (N, T, ...) data.
        loss = F.SequenceMask(loss, sequence_length=valid_length, use_sequence_length=True, axis=1)
        loss = _weighted(F, loss, self._weight, None)
        return F.mean(loss, axis=0, exclude=True)
