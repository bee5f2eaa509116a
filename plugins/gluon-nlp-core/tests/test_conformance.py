"""The plugin passes gluon_hub's conformance kit, as every published plugin should."""

from __future__ import annotations

import pytest

import gluon_hub
from gluon_hub.testing import assert_plugin_conforms


def test_every_spec_is_valid_and_its_metadata_complete():
    assert_plugin_conforms("nlp", build_models=False)


#: big_rnn_lm_2048_512 (822M parameters, 3.3 GB) is built at full size by its declared shapes
#: only (tests/test_models_elmo.py), and run at a reduced size there: allocating it here too
#: took this process past 20 GB beside the other full-size builds
FULL_SIZE = [name for name in gluon_hub.list_models(plugin="nlp") if name != "big_rnn_lm_2048_512"]


@pytest.mark.parametrize("name", FULL_SIZE)
def test_model_builds_runs_and_matches_its_declared_output_shape_and_size(name):
    # Every model at full size, fed every input its spec declares. BERT-large is the
    # largest: about 4 s and 2.3 GB on two CPU cores, mostly initialising 336M weights
    # (the whole file: about 12 s, 5.3 GB peak, as MXNet's memory pool keeps freed blocks).
    # A batch of 2, so that the batch axis is told apart from a length of 1 (the LMs are
    # time-major: their layout puts the batch second).
    report = assert_plugin_conforms("nlp", pattern=name, batch_size=2)
    assert report.checked.get("built") == 1, str(report)
    spec = gluon_hub.info(name)
    assert spec.output_shape is not None and spec.num_params is not None
