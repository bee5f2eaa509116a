"""The hub's command line in a fresh process, as the runtime comparisons call it."""

from __future__ import annotations

import json
import subprocess
import sys


def hub_json(*args: str, check_no_mxnet: bool = False, prelude: str = "") -> list[dict]:
    """``gluon-hub ARGS`` in a fresh process: its JSON lines (optionally asserting that it
    never imported MXNet, as the ONNX runtime must not). ``prelude`` is Python run first (a
    test's models registered by ``gluon_hub.register_plugin``)."""
    code = ("import sys\n" + prelude + "\nfrom gluon_hub.cli import main\nrc = main(sys.argv[1:])\n"
            + ("assert 'mxnet' not in sys.modules, 'the ONNX path imported mxnet'\n" if check_no_mxnet else "")
            + "sys.exit(rc)\n")
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines()]
