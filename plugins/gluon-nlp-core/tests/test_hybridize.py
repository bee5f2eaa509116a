"""Every text model in the registry hybridizes: built with random weights, run once
imperatively and once as a cached graph on a tiny batch (2 sequences of 8 tokens, or 8
steps of 2 for the time-major language models), with the same outputs.

About 2.5 minutes on two CPU cores, almost all of it initialising full-size weights (GPT-2
345M, BERT- and RoBERTa-large take 15-30 s each); the forward passes are under a second.
"""

from __future__ import annotations

import numpy as np
import pytest

import gluon_hub
from gluon_hub.compat import mx
from gluon_hub.testing import _example_inputs

NAMES = gluon_hub.list_models(plugin="nlp")
#: big_rnn_lm_2048_512's 793,471-token embedding and decoder are 99% of its 822M parameters
#: (3.3 GB); a 1,000-token vocabulary keeps its LSTMP layer at full size.
FACTORY_KWARGS = {"big_rnn_lm_2048_512": {"vocab_size": 1000}}


def _arrays(output) -> list[np.ndarray]:
    """Every array of a nested list/tuple output, in order."""
    if isinstance(output, (list, tuple)):
        return [array for item in output for array in _arrays(item)]
    return [output.asnumpy()]


def _outermost_hybrid_blocks(block) -> list:
    """The block itself when it hybridizes, else its outermost hybridizable children (the
    translation model is a ``Block`` around a hybridizable encoder, decoder and embedding)."""
    if isinstance(block, mx.gluon.HybridBlock):
        return [block]
    found = {}
    for child in block._children.values():
        for hybrid in _outermost_hybrid_blocks(child):
            found[id(hybrid)] = hybrid  # the same child may be registered under two names
    return list(found.values())


@pytest.mark.parametrize("name", NAMES)
def test_model_hybridizes_with_the_same_outputs(name):
    spec = gluon_hub.info(name)
    net = gluon_hub.load(name, **FACTORY_KWARGS.get(name, {}))
    inputs = _example_inputs((spec.input, *spec.extra_inputs), batch_size=2, free_dim=8)
    eager = _arrays(net(*inputs))
    net.hybridize()
    graph = _arrays(net(*inputs))
    blocks = _outermost_hybrid_blocks(net)
    assert blocks and all(block._cached_graph for block in blocks), f"{name}: a graph was not built"
    assert [a.shape for a in graph] == [a.shape for a in eager]
    for index, (want, have) in enumerate(zip(eager, graph)):
        # The graph runs the same operators as the imperative calls; a relative 1e-5 of the
        # output's scale leaves room for kernels that order a float32 sum differently.
        scale = max(float(np.abs(want).max()), 1.0)
        np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-5 * scale,
                                   err_msg=f"{name}: output {index}")
