"""int8 inference for BERT sentence classifiers through MXNet's oneDNN quantization.

The fp32 classifier is exported to a symbol, its dense layers (and the other operators
oneDNN supports) are replaced by int8 kernels, and the int8 ranges are calibrated on a
few batches of real inputs. The result is an ``mxnet.gluon.SymbolBlock`` called like the
classifier, ``net(tokens, token_types, valid_length)``.

Calibration batches are ``(tokens, token_types, valid_length)`` of the shapes used at
inference: the quantized graph is built for those shapes.
"""

from __future__ import annotations

import logging
from typing import Iterable, Sequence

from gluon_hub.compat import mx

__all__ = ["quantize_classifier", "agreement"]

_CALIB_MODES = ("naive", "entropy")
#: Kept in fp32: MXNet 1.9.1's int8 self-attention kernels disagree on their input types
#: (int8 against uint8) after calibration; the dense layers carry most of the time anyway.
_FP32_OPERATORS = ("_sg_mkldnn_selfatt_qk",
                   "_sg_mkldnn_selfatt_valatt")


class _Batches(mx.io.DataIter):
    """The calibration batches as the DataIter MXNet's calibration reads."""

    def __init__(self, batches: Sequence[Sequence[mx.nd.NDArray]]) -> None:
        first = batches[0]
        super().__init__(batch_size=first[0].shape[0])
        self._batches = list(batches)
        self._cursor = 0
        self.provide_data = [mx.io.DataDesc(f"data{i}", x.shape) for i, x in enumerate(first)]
        self.provide_label = None

    def reset(self) -> None:
        self._cursor = 0

    def next(self) -> mx.io.DataBatch:
        if self._cursor >= len(self._batches):
            raise StopIteration
        batch = self._batches[self._cursor]
        self._cursor += 1
        return mx.io.DataBatch(data=list(batch), pad=0)


def quantize_classifier(
    net: mx.gluon.HybridBlock,
    calib_batches: Iterable[Sequence[mx.nd.NDArray]],
    calib_mode: str = "naive",
    exclude_layers_match: Sequence[str] = (),
    logger: logging.Logger | None = None,
) -> mx.gluon.SymbolBlock:
    """An int8 copy of a BERT classifier, calibrated on ``calib_batches``.

    Parameters
    ----------
    net : an initialised :class:`~gluon_nlp_core.models.bert.BERTClassifier` (any
        ``HybridBlock`` taking ``(tokens, token_types, valid_length)``).
    calib_batches : a few batches ``(tokens, token_types, valid_length)``, all of one shape.
    calib_mode : ``"naive"`` (min/max of the calibration outputs) or ``"entropy"``
        (KL-divergence thresholds, slower, usually more accurate).
    exclude_layers_match : substrings of layer names to keep in fp32.

    Examples
    --------
    >>> from gluon_hub.compat import mx
    >>> from gluon_nlp_core.models.bert import BERTClassifier, bert_12_768_12
    >>> bert = bert_12_768_12(vocab_size=30, num_layers=1, units=16, hidden_size=32,
    ...                       num_heads=2, use_decoder=False, use_classifier=False)
    >>> clf = BERTClassifier(bert, num_classes=2); clf.initialize()
    >>> batch = (mx.nd.ones((2, 8)), mx.nd.zeros((2, 8)), mx.nd.array([8, 5]))
    >>> int8 = quantize_classifier(clf, [batch])
    >>> int8(*batch).shape
    (2, 2)
    """
    if calib_mode not in _CALIB_MODES:
        raise ValueError(f"calib_mode must be one of {_CALIB_MODES}, got {calib_mode!r}")
    batches = [tuple(batch) for batch in calib_batches]
    if not batches:
        raise ValueError("quantization needs at least one calibration batch")
    shapes = {tuple(x.shape for x in batch) for batch in batches}
    if len(shapes) != 1:
        raise ValueError(f"calibration batches must share one shape, got {sorted(shapes)}")
    data = _Batches(batches)
    net.hybridize(static_alloc=True, static_shape=True)
    return mx.contrib.quantization.quantize_net_v2(
        net,
        quantized_dtype="int8",
        quantize_mode="smart",
        exclude_layers_match=list(exclude_layers_match),
        exclude_operators=list(_FP32_OPERATORS),
        calib_data=data,
        data_shapes=data.provide_data,
        calib_mode=calib_mode,
        num_calib_examples=sum(batch[0].shape[0] for batch in batches),
        ctx=mx.cpu(),
        logger=logger,
    )


def agreement(fp32: mx.gluon.Block, int8: mx.gluon.Block,
              batches: Iterable[Sequence[mx.nd.NDArray]]) -> float:
    """Fraction of examples on which the two models predict the same class."""
    same = total = 0
    for batch in batches:
        a = fp32(*batch).argmax(axis=-1)
        b = int8(*batch).argmax(axis=-1)
        same += int((a == b).sum().asscalar())
        total += a.shape[0]
    if not total:
        raise ValueError("agreement needs at least one batch")
    return same / total
