"""Start-up of the MXNet-free runtime against MXNet's: a fresh process that imports the hub and
loads a classifier, then classifies one batch (issue 32: "without MXNet, import
gluon_hub.runtime plus loading a classifier takes well under a second").

Both sides run as whole processes, alternating, so interpreter start-up counts on both:

- onnx: ``import gluon_hub.runtime``, ``gluon_hub.runtime.load(MODEL, FILE)``, one batch through
  the runner, in the MXNet-free venv (``.venv-py3.13``, numpy 2; it fails if mxnet is imported);
- mxnet: ``import gluon_hub``, ``gluon_hub.load(MODEL, pretrained=False)``, hybridize, the same
  batch, in ``.venv`` (MXNet 1.9.1).

The files are ``scripts/export_onnx_fixtures.py``'s (He weights with a fixed seed, MXNet's
answers beside them): the onnx side's answers must equal MXNet's stored ones (it exits 1
otherwise). The mxnet side has other random weights, so only its shape is checked.
Prints each side's median wall time and the ratio.

Run: ``.venv/bin/python scripts/export_onnx_fixtures.py /tmp/fixtures`` then
``python bench/bench_runtime_startup.py /tmp/fixtures [--rounds 7]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ONNX_SIDE = """
import sys, numpy as np, gluon_hub.runtime
folder = sys.argv[1]
runner = gluon_hub.runtime.load(sys.argv[2], folder + "/" + sys.argv[3])
out = runner(np.load(folder + "/" + sys.argv[4]))
assert "mxnet" not in sys.modules, "the runtime imported mxnet"
np.testing.assert_allclose(out, np.load(folder + "/" + sys.argv[5]), rtol=1e-4, atol=1e-5)
"""

MXNET_SIDE = """
import sys, numpy as np, gluon_hub
from gluon_hub.compat import mx
net = gluon_hub.load(sys.argv[2], pretrained=False)
net.hybridize()
out = net(mx.nd.array(np.load(sys.argv[1] + "/" + sys.argv[4]))).asnumpy()
assert out.shape == np.load(sys.argv[1] + "/" + sys.argv[5]).shape
"""


def timed(python: Path, code: str, args: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run([str(python), "-c", code, *args], capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"bench: {python} failed:\n{done.stderr[-2000:]}")
    return took


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fixtures", type=Path, help="scripts/export_onnx_fixtures.py's folder")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--onnx-python", type=Path, default=ROOT / ".venv-py3.13" / "bin" / "python")
    parser.add_argument("--mxnet-python", type=Path, default=ROOT / ".venv" / "bin" / "python")
    args = parser.parse_args(argv)
    manifest = json.loads((args.fixtures / "manifest.json").read_text())
    files = [str(args.fixtures.resolve()), manifest["model"], manifest["onnx"], manifest["inputs"],
             manifest["outputs"]]
    for python in (args.onnx_python, args.mxnet_python):
        if not python.exists():
            sys.exit(f"bench: {python} does not exist; make it with scripts/setup.sh (see README)")
    times: dict[str, list[float]] = {"onnx": [], "mxnet": []}
    timed(args.onnx_python, ONNX_SIDE, files)  # warm the file cache once each
    timed(args.mxnet_python, MXNET_SIDE, files)
    for _ in range(args.rounds):
        times["onnx"].append(timed(args.onnx_python, ONNX_SIDE, files))
        times["mxnet"].append(timed(args.mxnet_python, MXNET_SIDE, files))
    onnx, mxnet = (statistics.median(times[k]) for k in ("onnx", "mxnet"))
    print(f"{manifest['model']}, batch {len(manifest['images'])}, median of {args.rounds} processes each")
    print(f"  onnx  (import gluon_hub.runtime + load + run): {onnx:.2f} s")
    print(f"  mxnet (import gluon_hub + load + run):         {mxnet:.2f} s")
    print(f"  ratio mxnet / onnx: {mxnet / onnx:.2f}x (answers of the onnx side equal MXNet's stored ones)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
