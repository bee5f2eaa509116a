"""Word-embedding loading: gluon_nlp_core against GluonNLP 0.10's TokenEmbedding, one run.

Generates a GloVe-format text file (default 400,000 words x 300, the glove.6B.300d shape;
goal: first load at least 3x faster than ``TokenEmbedding.from_file``), loads it with both,
checks the vectors agree, and prints times, ratios and peak memory. The second (cached,
memory-mapped) load is timed too. Each side runs in its own subprocess so that peak memory
(``ru_maxrss``) is its own. Ours parses large files in forked workers, whose memory the
parent's peak leaves out: the largest worker's peak is printed beside it, with the total
that the parent and all workers could at most have held at once.

Run: ``.venv/bin/python bench/bench_embeddings.py [--words 50000 --dim 50]``. GluonNLP keeps
every number as a Python float while parsing, so the full size needs several GB for it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

_CHILD = r"""
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
side, path, home, probe = sys.argv[1:5]
probe = json.loads(probe)
out = {}
if side == "gluonnlp":
    import gluon_hub.compat  # numpy aliases for gluonnlp's mxnet import
    import gluonnlp
    start = time.perf_counter()
    emb = gluonnlp.embedding.TokenEmbedding.from_file(path)
    emb.idx_to_vec.wait_to_read()
    out["first"] = time.perf_counter() - start
    out["probe"] = emb[probe].asnumpy().tolist()
else:
    import gluon_hub.cache  # imported on first use; keep import time out of the timing
    from gluon_nlp_core.text import load_embedding_file
    for run in ("first", "cached"):
        start = time.perf_counter()
        emb = load_embedding_file(path, root=home)
        out[run] = time.perf_counter() - start
    out["probe"] = emb[probe].tolist()
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
# forked parsing workers: the largest one's peak (0 when the file was parsed in this process)
out["worker_peak_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
if side == "ours":
    from gluon_nlp_core.text.embedding_files import _workers
    from pathlib import Path
    out["workers"] = _workers(Path(path)) if out["worker_peak_mb"] else 0
print(json.dumps(out))
"""


def write_glove(path: Path, words: int, dim: int, seed: int = 0) -> list[str]:
    """A GloVe-style file: words ``w0 ... wN`` with 5-decimal vectors (``-0.41242``, as
    GloVe writes them), written in blocks."""
    rng = np.random.RandomState(seed)
    with open(path, "w", encoding="utf-8") as f:
        for start in range(0, words, 10_000):
            count = min(10_000, words - start)
            block = rng.standard_normal((count, dim))
            f.writelines(
                f"w{start + i} " + " ".join(f"{v:.5f}" for v in row) + "\n"
                for i, row in enumerate(block)
            )
    return [f"w{i}" for i in (0, words // 2, words - 1)] + ["not-a-word"]


def run_side(side: str, path: Path, home: Path, probe: list[str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, side, str(path), str(home), json.dumps(probe)],
        check=True, capture_output=True, text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--words", type=int, default=400_000)
    parser.add_argument("--dim", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "glove.txt"
        probe = write_glove(path, args.words, args.dim)
        size_mb = path.stat().st_size / 2**20
        ours = run_side("ours", path, Path(tmp) / "cache", probe)
        theirs = run_side("gluonnlp", path, Path(tmp) / "cache", probe)
    if not np.array_equal(np.array(ours["probe"]), np.array(theirs["probe"])):
        raise SystemExit("the two loaders disagree on the probed vectors")
    print(f"{args.words} words x {args.dim} ({size_mb:.0f} MB of text); vectors agree")
    print(f"GluonNLP TokenEmbedding.from_file: {theirs['first']:.2f} s, peak {theirs['peak_mb']:.0f} MB")
    workers = ""
    if ours["workers"]:
        bound = ours["peak_mb"] + ours["workers"] * ours["worker_peak_mb"]
        workers = (f" (+ {ours['workers']} parsing workers, each at most {ours['worker_peak_mb']:.0f} MB: "
                   f"at most {bound:.0f} MB in all)")
    print(f"gluon_nlp_core first load:         {ours['first']:.2f} s, peak {ours['peak_mb']:.0f} MB{workers} "
          f"-> {theirs['first'] / ours['first']:.1f}x faster")
    print(f"gluon_nlp_core cached (mmap) load: {ours['cached']:.3f} s "
          f"-> {theirs['first'] / ours['cached']:.0f}x faster")


if __name__ == "__main__":
    main()
