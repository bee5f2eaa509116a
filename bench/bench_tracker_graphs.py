"""SiamRPN's per-frame network under onnxruntime: the ``search`` graph alone (the template's
features computed once, as the ONNX tracker runs it) against the whole network exported as one
graph (template and search crops, the template's backbone again with every frame).

Both files come from the same He-initialised network (``gluon_hub.export`` by name writes the
two graphs, ``gluon_hub.export`` of the block the one), and the script exits 1 unless the
search graph's ``(cls, loc)`` equal the whole graph's within 1e-5 of their scale. The timing is
``bench_cv_inference.py``'s (one intra-op thread count, alternating warm-up, rounds timing both
back to back in alternating order); the ratio is the median of the per-round ratios, above 1
when the search graph is faster.

Run: ``.venv/bin/python bench/bench_tracker_graphs.py [--rounds 15] [--threads 1]``; under a minute.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
from bench_cv_inference import interleaved, pin_threads, summarise

NAME = "siamrpn_alexnet_v2_otb15"
TEMPLATE, SEARCH = (1, 3, 127, 127), (1, 3, 287, 287)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime's intra-op threads (default 1)")
    args = parser.parse_args(argv)
    pin_threads(args.threads)

    import onnxruntime

    import gluon_hub
    from gluon_hub.compat import mx

    net = gluon_hub.load(NAME)
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    net(mx.nd.zeros(TEMPLATE), mx.nd.zeros(SEARCH))
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = args.threads

    def session(path: Path):
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    with tempfile.TemporaryDirectory() as folder:
        params = Path(folder) / "siamrpn.params"
        net.save_parameters(str(params))
        (whole_file,) = gluon_hub.export(net, Path(folder) / "whole.onnx", format="onnx", input_shape=[TEMPLATE, SEARCH])
        template_file, search_file = gluon_hub.export(NAME, Path(folder) / "graphs.onnx", format="onnx",
                                                      pretrained=str(params))
        whole, template, search = session(whole_file), session(template_file), session(search_file)

    rng = np.random.default_rng(0)
    crop = rng.uniform(0, 255, TEMPLATE).astype(np.float32)
    region = rng.uniform(0, 255, SEARCH).astype(np.float32)
    whole_feeds = dict(zip([i.name for i in whole.get_inputs()], (crop, region)))
    (features,) = template.run(None, {template.get_inputs()[0].name: crop})
    search_feeds = dict(zip([i.name for i in search.get_inputs()], (features, region)))
    for want, got in zip(whole.run(None, whole_feeds), search.run(None, search_feeds)):
        if np.abs(got - want).max() > 1e-5 * np.abs(want).max():
            print(f"the search graph's outputs differ from the whole network's by "
                  f"{np.abs(got - want).max() / np.abs(want).max():.1e} of their scale", file=sys.stderr)
            return 1

    times_whole, times_search = interleaved(lambda: whole.run(None, whole_feeds),
                                            lambda: search.run(None, search_feeds), args.rounds, iters=4)
    result = summarise(times_whole, times_search)
    print(f"{NAME}, one frame (template {TEMPLATE[2]}, search {SEARCH[2]}), onnxruntime "
          f"{onnxruntime.__version__}, {args.threads} thread(s), {args.rounds} rounds; outputs equal")
    print(f"whole graph {result['a'] * 1e3:.1f} ms, search graph {result['b'] * 1e3:.1f} ms, "
          f"whole/search {result['ratio']:.2f} (fastest rounds {result['min_ratio']:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
