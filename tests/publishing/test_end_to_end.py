"""Publish a trained network, serve it on loopback, load it by name in a fresh process."""

from __future__ import annotations

import numpy as np
from tests_publishing_lib import load_in_fresh_process, outputs_of

from gluon_hub.cache import fetch


def test_published_weights_load_by_name_from_a_loopback_mirror(
    published, mirror, inputs, trained_net, tmp_path, monkeypatch
):
    out, variant = published
    home = tmp_path / "fresh-home"
    got = load_in_fresh_process(out / "weights.json", inputs, tmp_path,
                                GLUON_HUB_MIRRORS=mirror.url, GLUON_HUB_HOME=str(home))
    np.testing.assert_allclose(got, outputs_of(trained_net, inputs), rtol=1e-6, atol=1e-7)
    # It came through the cache, and the mirror was its only source: it is cached now.
    monkeypatch.setenv("GLUON_HUB_OFFLINE", "1")
    cached = fetch(variant.file, root=home)
    assert cached.read_bytes() == (out / variant.file.filename).read_bytes()

