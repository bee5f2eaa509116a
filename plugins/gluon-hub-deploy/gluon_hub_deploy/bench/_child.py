"""One measurement of ``gluon-hub bench``, run as ``python -m gluon_hub_deploy.bench._child JOB``
in a process of its own: the parent reads this process's peak RSS when it ends, so nothing
another case built (MXNet's memory pools, an onnxruntime session) counts against this one.

``JOB`` is a JSON object: ``{"action": "export", "model", "shapes", "path"}`` writes the ONNX
file; ``{"action": "measure", "model", "runtime", "shapes", "dtypes", "warmup", "repeat",
"onnx"?}`` times ``repeat`` calls after ``warmup`` and prints ``{"times_s": [...]}`` as its last
line. Weights are random: timings do not depend on trained values, and none can be assumed
present. The onnx runtime's process imports onnxruntime and numpy only, never MXNet.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Callable

import numpy as np


def _arrays(shapes: list[list[int]], dtypes: list[str]) -> list[np.ndarray]:
    """Uniform floats; ones for integer inputs (valid token ids and lengths alike)."""
    rng = np.random.default_rng(0)
    return [np.ones(s, dtype=d) if "int" in d else rng.uniform(-1, 1, size=s).astype(d)
            for s, d in zip(shapes, dtypes)]


def _mxnet_call(job: dict[str, Any], arrays: list[np.ndarray]) -> Callable[[], None]:
    import gluon_hub
    from gluon_hub.compat import mx

    runtime = job["runtime"]
    name = f"{job['model']}_int8" if runtime == "int8" else job["model"]
    net = gluon_hub.load(name)  # random weights; an int8 model calibrates on a uniform batch
    inputs = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
    if runtime == "optimize":
        # what load(name, optimize=True) does, traced at the measured shape rather than batch 1
        net = gluon_hub.optimize(net, inputs)
    else:
        net.hybridize(static_alloc=True, static_shape=True)

    def call() -> None:
        out = net(*inputs)
        for o in out if isinstance(out, (list, tuple)) else [out]:
            o.wait_to_read()

    return call


def _onnx_call(job: dict[str, Any], arrays: list[np.ndarray]) -> Callable[[], None]:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(job["onnx"], options, providers=["CPUExecutionProvider"])
    feed = {i.name: a for i, a in zip(session.get_inputs(), arrays)}
    return lambda: session.run(None, feed) and None


def measure(job: dict[str, Any]) -> dict[str, Any]:
    """Time one case: ``warmup`` calls, then ``repeat`` timed ones."""
    arrays = _arrays(job["shapes"], job["dtypes"])
    call = _onnx_call(job, arrays) if job["runtime"] == "onnx" else _mxnet_call(job, arrays)
    for _ in range(job["warmup"]):
        call()
    times = []
    for _ in range(job["repeat"]):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return {"times_s": times}


def export(job: dict[str, Any]) -> dict[str, Any]:
    """Write the model's ONNX file with a free batch axis (one file serves every batch)."""
    import gluon_hub

    gluon_hub.export(job["model"], job["path"], format="onnx", input_shape=job["shapes"], dynamic_batch=True)
    return {"path": job["path"]}


def main(argv: list[str]) -> int:
    job = json.loads(argv[0])
    result = export(job) if job["action"] == "export" else measure(job)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
