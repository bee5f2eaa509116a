"""Fixtures of gluon-hub-deploy's tests: a fresh hub per test, with no hub variables set."""

from __future__ import annotations

from pathlib import Path

import pytest

import gluon_hub


@pytest.fixture(autouse=True)
def fresh_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """Every test discovers the installed plugins anew; a fetched index is cached in its temp dir."""
    for var in ("GLUON_HUB_DISABLE_PLUGIN_AUTOLOAD", "GLUON_HUB_DISABLE_PLUGINS",
                "GLUON_HUB_STRICT_PLUGINS", "GLUON_HUB_INDEX", "GLUON_HUB_PREFER_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GLUON_HUB_HOME", str(tmp_path / "hub-home"))
    yield gluon_hub.reset_hub()
    gluon_hub.reset_hub()


def _he_initialised(net, moved=True):
    """He (fan-in) random weights, which keep activations far from zero through deep nets, with
    the normalisation parameters away from 1 and 0 (as the portability matrix measures them)."""
    from gluon_hub.compat import mx
    from gluon_hub_deploy._measure import random_initializer

    he = mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2)
    net.initialize(random_initializer() if moved else he, force_reinit=True)
    return net


@pytest.fixture
def onnx_matches_mxnet(tmp_path: Path):
    """Export a model (a name or a block) to ONNX and check onnxruntime against MXNet.

    For each input shape in ``shapes`` (one array per model input, or one shape), both run
    on the same random input; every output must satisfy max |diff| <= 1e-4 * max |MXNet|.
    With ``dynamic`` the first shape is exported once with free batch and spatial axes and
    serves every shape; otherwise each shape is exported again (its graph is fixed). Returns
    the largest relative difference per shape, for the portability matrix. A block whose
    weights a test set itself is passed with ``initialise=False``; ``moved=False`` keeps the
    normalisation parameters at their initial values (plain He weights).
    """
    import numpy as np
    import onnxruntime

    from gluon_hub.compat import mx

    def check(model, shapes, *, dynamic: bool = True, tolerance: float = 1e-4, initialise: bool = True,
              moved: bool = True, **load_kwargs):
        net = gluon_hub.load(model, **load_kwargs) if isinstance(model, str) else model
        if initialise:
            mx.random.seed(0)  # the same weights every run: the tolerance is checked on them
            _he_initialised(net, moved)
        rng = np.random.default_rng(0)
        worst = []
        session = None
        for index, shape in enumerate(shapes):
            several = isinstance(shape[0], (tuple, list))
            inputs = [rng.normal(size=s).astype(np.float32) for s in (shape if several else [shape])]
            expected = net(*[mx.nd.array(x) for x in inputs])
            expected = [o.asnumpy() for o in (expected if isinstance(expected, (list, tuple)) else [expected])]
            if session is None or not dynamic:
                path = tmp_path / f"model-{index}.onnx"
                gluon_hub.export(net, path, format="onnx", input_shape=[x.shape for x in inputs],
                                 dynamic_batch=dynamic, dynamic_spatial=dynamic)
                session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
            got = session.run(None, {i.name: x for i, x in zip(session.get_inputs(), inputs)})
            assert len(got) == len(expected)
            diffs = []
            for g, e in zip(got, expected):
                assert g.shape == e.shape, (shape, g.shape, e.shape)
                scale = float(np.abs(e).max())
                diffs.append(float(np.abs(g - e).max()) / scale if scale else float(np.abs(g).max()))
            assert max(diffs) <= tolerance, (shape, diffs)
            worst.append(max(diffs))
        return worst

    return check
