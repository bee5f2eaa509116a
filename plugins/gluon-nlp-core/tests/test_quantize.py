"""int8 BERT classification: the calibrated model runs and mostly agrees with fp32."""

from __future__ import annotations

import numpy as np
import pytest

from gluon_hub.compat import mx
from gluon_nlp_core.models.bert import BERTClassifier, bert_12_768_12
from gluon_nlp_core.quantize import agreement, quantize_classifier

VOCAB, LENGTH, BATCH = 60, 16, 8


def _classifier():
    mx.random.seed(1)
    bert = bert_12_768_12(vocab_size=VOCAB, num_layers=2, units=32, hidden_size=64,
                          num_heads=2, max_length=LENGTH, use_decoder=False,
                          use_classifier=False)
    net = BERTClassifier(bert, num_classes=3)
    net.initialize(mx.init.Normal(0.2))
    return net


def _batches(count, seed):
    rng = np.random.RandomState(seed)
    return [(mx.nd.array(rng.randint(0, VOCAB, (BATCH, LENGTH))),
             mx.nd.array(rng.randint(0, 2, (BATCH, LENGTH))),
             mx.nd.array(rng.randint(4, LENGTH + 1, (BATCH,)))) for _ in range(count)]


def test_int8_classifier_mostly_agrees_with_fp32():
    net = _classifier()
    int8 = quantize_classifier(net, _batches(3, seed=0))
    held_out = _batches(4, seed=1)
    out = int8(*held_out[0])
    assert out.shape == (BATCH, 3)
    assert np.isfinite(out.asnumpy()).all()
    # int8 scores are close, not equal: the graph really changed.
    assert not np.array_equal(out.asnumpy(), net(*held_out[0]).asnumpy())
    assert agreement(net, int8, held_out) >= 0.8


def test_calibration_input_is_checked():
    net = _classifier()
    with pytest.raises(ValueError, match="calib_mode"):
        quantize_classifier(net, _batches(1, 0), calib_mode="minmax")
    with pytest.raises(ValueError, match="at least one"):
        quantize_classifier(net, [])
    short = _batches(1, 0)[0]
    mixed = [_batches(1, 0)[0], tuple(x[:4] for x in short)]
    with pytest.raises(ValueError, match="one shape"):
        quantize_classifier(net, mixed)
