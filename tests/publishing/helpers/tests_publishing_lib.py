"""Helpers the publishing tests share: run a network, load a model in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HELPERS = Path(__file__).parent


def outputs_of(net, inputs: Path) -> np.ndarray:
    from gluon_hub.compat import mx

    return net(mx.nd.array(np.load(inputs))).asnumpy()


def load_in_fresh_process(index: Path, inputs: Path, tmp_path: Path, **env: str | None) -> np.ndarray:
    """Run the helper in a new interpreter: register the plugin, load by name, predict.

    ``env`` adds variables to this process's environment; None removes one.
    """
    out = tmp_path / f"outputs-{len(list(tmp_path.glob('outputs-*')))}.npy"
    environ = {**os.environ, **env,
               "PYTHONPATH": os.pathsep.join([str(HELPERS), os.environ.get("PYTHONPATH", "")])}
    environ = {k: v for k, v in environ.items() if v is not None}
    result = subprocess.run(
        [sys.executable, str(HELPERS / "tests_publishing_models.py"), str(index), str(inputs), str(out)],
        env=environ, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return np.load(out)
