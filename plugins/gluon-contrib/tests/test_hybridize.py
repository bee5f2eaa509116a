"""Every contrib model in the registry hybridizes: built with random weights, run once
imperatively and once as a cached graph on a tiny batch, with the same outputs. The textCNNs
get 2 sentences of 8 tokens; the CycleGAN networks, fully convolutional, 64x64 images
instead of their declared 128 or 256 pixels. About 15 s on two CPU cores.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import gluon_hub
from gluon_hub.testing import _example_inputs

NAMES = gluon_hub.list_models(plugin="contrib")
TINY_IMAGE = (3, 64, 64)


def _arrays(output) -> list[np.ndarray]:
    """Every array of a nested list/tuple output, in order."""
    if isinstance(output, (list, tuple)):
        return [array for item in output for array in _arrays(item)]
    return [output.asnumpy()]


@pytest.mark.parametrize("name", NAMES)
def test_model_hybridizes_with_the_same_outputs(name):
    spec = gluon_hub.info(name)
    declared = [spec.input, *spec.extra_inputs]
    declared = [dataclasses.replace(i, shape=TINY_IMAGE) if i.layout == "NCHW" else i
                for i in declared]
    net = gluon_hub.load(name)
    inputs = _example_inputs(declared, batch_size=2, free_dim=8)
    eager = _arrays(net(*inputs))
    net.hybridize()
    graph = _arrays(net(*inputs))
    assert net._cached_graph, f"{name}: the hybridized call did not build a graph"
    assert [a.shape for a in graph] == [a.shape for a in eager]
    for index, (want, have) in enumerate(zip(eager, graph)):
        # Same operators in both runs; a relative 1e-5 of the output's scale leaves room
        # for kernels that order a float32 sum differently.
        scale = max(float(np.abs(want).max()), 1.0)
        np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-5 * scale,
                                   err_msg=f"{name}: output {index}")
