"""The hub's ONNX runners against GluonCV in MXNet, end to end, on the same images and weights.

Issue 32's goal: each task's runner (``gluon_hub.runtime.load``: onnxruntime plus numpy pre-
and post-processing) at least 1.5x GluonCV's throughput with the same answers. Per task, one
model: ``mobilenet1.0`` (classification: top-5 of each image), ``yolo3_mobilenet0.25_voc``
(detection: boxes above 0.1 in image pixels) and ``fcn_resnet50_voc`` (semantic segmentation:
the class map at image size). Both sides start from the image file and end with the answer:
GluonCV decodes with ``mx.image.imread``, preprocesses with its presets
(``presets.imagenet.transform_eval``, ``presets.yolo.load_test``,
``presets.segmentation.test_transform``), runs its model (hybridized with static memory;
FCN as GluonCV's demo runs it, ``model.predict``, since its hybridized graph fixes the output
size) and finishes in numpy; the runner does all of that itself. The weights are random
(GluonCV's model, its conv weights drawn with a fixed seed, loaded strictly into the hub's
model and exported to ONNX from there).

Each ratio is GluonCV's time over the runner's (above 1: the runner is faster), the median of
per-round ratios timed as ``bench_cv_inference.py`` times (one thread count for both sides,
alternating warm-up, rounds timing both back to back in alternating order). Answers are
compared first; the script exits 1 when they differ: the same top-5 classes (probabilities
within 1e-4), the same boxes (class, score within 1e-4, box within 1e-2 pixel), the same class
maps (every pixel).

Run: ``.venv/bin/python bench/bench_runtime_vs_gluoncv.py [--threads 1] [--rounds 5]
[--tasks classification detection segmentation]``; about two minutes on one thread.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
from pathlib import Path

import numpy as np
from bench_cv_inference import interleaved, pin_threads, summarise

HERE = Path(__file__).resolve().parent
MODELS = {"classification": "mobilenet1.0", "detection": "yolo3_mobilenet0.25_voc",
          "segmentation": "fcn_resnet50_voc"}
#: images per call: batch 1 and a larger batch
BATCHES = {"classification": (1, 8), "detection": (1, 4), "segmentation": (1, 4)}
THRESHOLD = 0.1  # the random weights score few boxes higher


def cpu_name() -> str:
    """The CPU model from /proc/cpuinfo, else what the platform module says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def images(folder: Path) -> dict[str, list[str]]:
    """Per task, the files it reads: the photograph that ships with matplotlib (600 x 512), and
    for segmentation (the whole image goes through a ResNet-50) a 240 x 320 crop of it."""
    from matplotlib import cbook
    from PIL import Image

    photo = str(cbook.get_sample_data("grace_hopper.jpg", asfileobj=False))
    crop = folder / "crop.png"
    Image.fromarray(np.asarray(Image.open(photo).convert("RGB"))[100:340, 80:400]).save(crop)
    return {"classification": [photo], "detection": [photo], "segmentation": [str(crop)]}


def exported(ours, name: str, side: int, folder: Path, threads: int):
    """The hub's runner on ``ours`` exported to ONNX (batch and spatial axes free)."""
    import gluon_hub
    import gluon_hub.runtime

    path = folder / f"{name}.onnx"
    gluon_hub.export(ours, path, format="onnx", input_shape=(1, 3, side, side), dynamic_batch=True,
                     dynamic_spatial=True)
    return gluon_hub.runtime.load(name, path, threads=threads)


def classification(folder: Path, threads: int):
    """``(reference(batch) -> answers, runner(batch) -> answers, compare)`` for the classifier."""
    from bench_cv_inference import build_pair

    from gluon_hub.compat import mx

    from gluoncv.data.transforms.presets.imagenet import transform_eval

    name = MODELS["classification"]
    ours, ref, _ = build_pair(name, (1, 3, 224, 224))
    runner = exported(ours, name, 224, folder, threads)
    labels = runner.labels(1000)

    def reference(paths):
        batch = mx.nd.concat(*[transform_eval(mx.image.imread(p)).reshape((-1, 3, 224, 224)) for p in paths],
                             dim=0)
        probs = mx.nd.softmax(ref(batch)).asnumpy()
        return [[(labels[i], float(row[i])) for i in row.argsort()[::-1][:5]] for row in probs]

    def ours_(paths):
        return runner.classify(paths, topk=5, batch_size=len(paths))

    def same(want, got):
        return all([w[0] for w in a] == [g[0] for g in b]
                   and np.allclose([w[1] for w in a], [g[1] for g in b], atol=1e-4) for a, b in zip(want, got))

    return reference, ours_, same


def detection(folder: Path, threads: int):
    from bench_detection import build_pair
    from PIL import Image

    from gluon_hub.compat import mx

    from gluoncv.data.transforms.presets.yolo import load_test

    name = MODELS["detection"]
    ours, ref, _ = build_pair(name, 416)
    ref.hybridize()  # images keep their aspect ratio: the batch-1 and batch-4 shapes differ
    runner = exported(ours, name, 416, folder, threads)

    def reference(paths):
        xs, _ = load_test(paths, short=416)  # its second list holds the resized images
        xs = [x.reshape((-1, *x.shape[-3:])) for x in (xs if isinstance(xs, list) else [xs])]
        ids, scores, boxes = (o.asnumpy() for o in ref(mx.nd.concat(*xs, dim=0)))
        found = []
        for k, path in enumerate(paths):
            keep = (ids[k, :, 0] >= 0) & (scores[k, :, 0] >= THRESHOLD)
            with Image.open(path) as image:  # the header's size: GluonCV leaves boxes in resized pixels
                width, height = image.size
            scale = np.array([width / xs[k].shape[3], height / xs[k].shape[2]] * 2)
            kept = np.clip(boxes[k][keep] * scale, 0, [width, height, width, height])
            order = np.argsort(-scores[k, keep, 0], kind="stable")
            found.append([(ref.classes[int(i)], float(s), tuple(b))
                          for i, s, b in zip(ids[k, keep, 0][order], scores[k, keep, 0][order], kept[order])])
        return found

    def ours_(paths):
        return [[(d.label, d.score, d.box) for d in items]
                for _, items in runner.detect(paths, THRESHOLD, batch_size=len(paths))]

    def same(want, got):
        if not any(want):
            raise SystemExit(f"{name}: no box scores {THRESHOLD} on these weights: nothing to compare")
        for a, b in zip(want, got):
            unused = list(b)
            for label, score, box in a:
                match = [g for g in unused if g[0] == label and abs(g[1] - score) <= 1e-4
                         and np.abs(np.subtract(g[2], box)).max() <= 1e-2]
                if not match:
                    return False
                unused.remove(match[0])
            if unused:
                return False
        return True

    return reference, ours_, same


def segmentation(folder: Path, threads: int):
    from bench_segmentation import build_pair

    from gluon_hub.compat import mx

    from gluoncv.data.transforms.presets.segmentation import test_transform

    name = MODELS["segmentation"]
    ours, ref, _ = build_pair(name, 240, hybridize=False)
    runner = exported(ours, name, 240, folder, threads)

    def reference(paths):
        batch = mx.nd.concat(*[test_transform(mx.image.imread(p), mx.cpu()) for p in paths], dim=0)
        return list(ref.predict(batch).argmax(axis=1).asnumpy().astype(np.int32))

    def ours_(paths):
        return [mask for _, mask, _ in runner.segment(paths, batch_size=len(paths))]

    def same(want, got):
        if len(np.unique(want[0])) < 2:
            raise SystemExit(f"{name}: one class covers the image on these weights: nothing to compare")
        return all(np.array_equal(a, b) for a, b in zip(want, got))

    return reference, ours_, same


def measure(reference, ours, paths: list[str], rounds: int, iters: int) -> dict[str, float]:
    """GluonCV's and the runner's median times on ``paths``, and the median ratio of the two."""
    return summarise(*interleaved(lambda: reference(paths), lambda: ours(paths), rounds, iters, warmup=1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", choices=list(MODELS), default=list(MODELS))
    parser.add_argument("--threads", type=int, default=1, help="threads of both sides (default 1)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iters", type=int, default=2, help="calls per timed block")
    args = parser.parse_args(argv)
    pin_threads(args.threads)
    sys.path.insert(0, str(HERE))
    import onnxruntime

    from gluon_hub.compat import mx

    import gluoncv

    print(f"CPU: {cpu_name()}; {args.threads} thread(s) each side; MXNet {mx.__version__}, "
          f"GluonCV {gluoncv.__version__}, onnxruntime {onnxruntime.__version__}")
    print(f"{'task':<15} {'model':<24} {'batch':>5} {'GluonCV ms':>11} {'runner ms':>10} {'ratio':>6}  answers")
    differ = False
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = images(folder)
        for task in args.tasks:
            reference, ours, same = globals()[task](folder, args.threads)
            for batch in BATCHES[task]:
                paths = files[task] * batch
                agree = same(reference(paths), ours(paths))
                differ |= not agree
                result = measure(reference, ours, paths, args.rounds, args.iters)
                print(f"{task:<15} {MODELS[task]:<24} {batch:>5} {result['a'] * 1e3:>11.1f} "
                      f"{result['b'] * 1e3:>10.1f} {result['ratio']:>6.2f}  {'same' if agree else 'DIFFER'}",
                      flush=True)
    if differ:
        print("the runner's answers differ from GluonCV's", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
