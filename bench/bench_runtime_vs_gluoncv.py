"""The hub's ONNX runners against GluonCV and GluonNLP in MXNet, end to end, on the same inputs and weights.

Issue 32's goal: each task's runner (``gluon_hub.runtime.load``: onnxruntime plus numpy pre-
and post-processing) at least 1.5x GluonCV's throughput with the same answers. Per task, one
model: ``mobilenet1.0`` (classification: top-5 of each image), ``yolo3_mobilenet0.25_voc``
(detection: boxes above 0.1 in image pixels), ``fcn_resnet50_voc`` (semantic segmentation:
the class map at image size), ``simple_pose_resnet18_v1b`` (pose: the keypoints of given person
boxes), ``inceptionv1_ucf101`` (action: TSN over 3 frames, top-5 of each video) and
``bert_12_768_12`` (text: the sequence and pooled features of each sentence). Both sides start
from the file (image, video) or the text and end with the answer: GluonCV decodes with
``mx.image.imread`` (videos: ``VideoClsCustom`` with decord), preprocesses with its presets
(``presets.imagenet.transform_eval``, ``presets.yolo.load_test``,
``presets.segmentation.test_transform``, ``pose.detector_to_simple_pose``,
``VideoGroupValTransform``; GluonNLP: ``BERTTokenizer`` and ``BERTSentenceTransform``), runs its
model (hybridized; FCN as GluonCV's demo runs it, ``model.predict``, since its hybridized graph
fixes the output size) and decodes (``pose.heatmap_to_coord``, softmax and top-5); the runner
does all of that itself. The weights are random (GluonCV's or the hub's model with seeded or
Xavier weights, loaded strictly into the other and exported to ONNX from the hub's).

Each ratio is GluonCV's time over the runner's (above 1: the runner is faster), the median of
per-round ratios timed as ``bench_cv_inference.py`` times (one thread count for both sides,
alternating warm-up, rounds timing both back to back in alternating order). The batch is the
images, persons in one image, videos or sentences of one call. Answers are compared first; the
script exits 1 when they differ: the same top-5 classes (probabilities within 1e-4; videos
1e-5), the same boxes (class, score within 1e-4, box within 1e-2 pixel), the same class maps
(every pixel), keypoints within 1e-3 pixel and their confidences within 1e-5, the same BERT
token ids and features within 1e-4 of their largest magnitude.

Run: ``.venv/bin/python bench/bench_runtime_vs_gluoncv.py [--threads 1] [--rounds 5]
[--tasks classification detection segmentation pose action bert]``; about five minutes on one thread.
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
          "segmentation": "fcn_resnet50_voc", "pose": "simple_pose_resnet18_v1b",
          "action": "inceptionv1_ucf101", "bert": "bert_12_768_12"}
#: inputs per call (images; persons in one image; videos; sentences): batch 1 and a larger batch
BATCHES = {"classification": (1, 8), "detection": (1, 4), "segmentation": (1, 4), "pose": (1, 4),
           "action": (1, 4), "bert": (1, 8)}
THRESHOLD = 0.1  # the random weights score few boxes higher
#: persons in the photograph (x0, y0, x1, y1), some reaching past its edges once grown, and their scores
PERSONS = [(100.5, 50.2, 400.7, 500.1), (0.0, 0.0, 60.0, 90.0), (450.0, 520.0, 512.0, 600.0),
           (200.3, 100.9, 260.0, 180.0)]
PERSON_SCORES = [0.9, 0.8, 0.7, 0.6]
#: generated videos, 40 frames each
VIDEOS = [f"video{i}.mp4" for i in range(4)]
SENTENCES = ["The cat sat on the mat, and the dog ran home.", "A quick brown fox jumps over the lazy dog.",
             "Models exported to ONNX run without MXNet.", "The hub lists every model with its weights.",
             "Rain fell on the old town all night long.", "She read the paper twice before the talk.",
             "Numbers in a table say less than a chart.", "The train left early, so we walked home."]


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
    for i, video in enumerate(VIDEOS):
        write_video(folder / video, shift=i)
    return {"classification": [photo], "detection": [photo], "segmentation": [str(crop)], "pose": [photo],
            "action": [str(folder / video) for video in VIDEOS], "bert": SENTENCES}


def write_video(path: Path, shift: int, frames: int = 40) -> None:
    """A 320 x 240 MPEG-4 video whose frames differ (a moving band, a changing blue level)."""
    import cv2

    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 10, (320, 240))
    for i in range(frames):
        frame = np.full((240, 320, 3), 30 + 20 * shift, np.uint8)
        frame[:, :, 0] = (i * 6 + 40 * shift) % 256
        frame[(i * 5) % 200:(i * 5) % 200 + 40, :, 2] = 220
        writer.write(frame)
    writer.release()


def exported(ours, name: str, side: int | tuple[int, int], folder: Path, threads: int):
    """The hub's runner on ``ours`` exported to ONNX (batch axis free; spatial axes too for a
    square ``side``, fixed for a ``(height, width)``)."""
    import gluon_hub
    import gluon_hub.runtime

    path = folder / f"{name}.onnx"
    size = (side, side) if isinstance(side, int) else side
    gluon_hub.export(ours, path, format="onnx", input_shape=(1, 3, *size), dynamic_batch=True,
                     dynamic_spatial=isinstance(side, int))
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


def pose(folder: Path, threads: int):
    """SimplePose on given person boxes: GluonCV's ``detector_to_simple_pose`` crops and
    ``heatmap_to_coord`` against the runner's ``estimate``; the batch is the number of persons."""
    from bench_video_pose import build_pair

    from gluon_hub.compat import mx
    from gluon_hub.runtime import read_image

    from gluoncv.data.transforms.pose import detector_to_simple_pose, heatmap_to_coord

    name = MODELS["pose"]
    ours, ref, _ = build_pair(name, (3, 256, 192))
    ref.hybridize()  # the person count (the batch) changes between calls
    runner = exported(ours, name, (256, 192), folder, threads)

    def reference(paths):
        image = mx.image.imread(paths[0])
        boxes = PERSONS[: len(paths)]
        found = len(boxes)
        crops, grown = detector_to_simple_pose(
            image, mx.nd.zeros((1, found, 1)), mx.nd.array([PERSON_SCORES[:found]]).reshape((1, found, 1)),
            mx.nd.array([boxes]))
        coords, confidence = heatmap_to_coord(ref(crops), grown)
        return [np.concatenate([c, s], axis=1) for c, s in zip(coords.asnumpy(), confidence.asnumpy())]

    def ours_(paths):
        found = len(paths)
        return [p.keypoints for p in runner.estimate(read_image(paths[0]), PERSONS[:found], PERSON_SCORES[:found])]

    def same(want, got):
        return len(want) == len(got) and all(
            np.abs(w[:, :2] - g[:, :2]).max() <= 1e-3 and np.abs(w[:, 2] - g[:, 2]).max() <= 1e-5
            for w, g in zip(want, got))

    return reference, ours_, same


def action(folder: Path, threads: int):
    """TSN over SEGMENTS_2D frames: GluonCV's ``VideoClsCustom`` (decord) and
    ``VideoGroupValTransform`` clip, its network averaging the segments, softmax and top-5,
    against the runner's ``classify``; the batch is the number of videos."""
    import gluon_hub
    from gluon_cv_core.action.predict import SEGMENTS_2D
    from gluon_hub.compat import mx

    import gluoncv
    from gluoncv.data import VideoClsCustom
    from gluoncv.data.transforms import video as gvideo

    name = MODELS["action"]
    ours = gluon_hub.load(name)
    ours.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    ours(mx.nd.zeros((1, 3, 224, 224)))
    # GluonCV's constructor moves its uninitialised weights to a context (an error without
    # pretrained_base); they are loaded right after. Its TSN averages the segments in the graph.
    reset_ctx = mx.gluon.Parameter.reset_ctx
    mx.gluon.Parameter.reset_ctx = lambda self, ctx: None
    try:
        ref = gluoncv.model_zoo.get_model(name, pretrained=False, pretrained_base=False, num_segments=SEGMENTS_2D)
    finally:
        mx.gluon.Parameter.reset_ctx = reset_ctx
    ours.save_parameters(str(folder / "action.params"))
    ref.load_parameters(str(folder / "action.params"))
    ref.hybridize(static_alloc=True)
    runner = exported(ours, name, (224, 224), folder, threads)
    spec = runner.spec
    labels = spec.class_names(spec.input.num_classes)
    listing = folder / "videos.txt"
    index = {str(folder / video): i for i, video in enumerate(VIDEOS)}
    listing.write_text("".join(f"{folder / video} 40 0\n" for video in VIDEOS))
    dataset = VideoClsCustom("", str(listing), train=False, video_loader=True, use_decord=True,
                             num_segments=SEGMENTS_2D, target_width=224, target_height=224,
                             transform=gvideo.VideoGroupValTransform(224, spec.input.mean, spec.input.std))

    def reference(paths):
        clips = mx.nd.concat(*[dataset[index[p]][0] for p in paths], dim=0)
        probs = mx.nd.softmax(ref(clips)).asnumpy()
        return [[(labels[i], float(row[i])) for i in np.argsort(-row, kind="stable")[:5]] for row in probs]

    def ours_(paths):
        return runner.classify(paths, topk=5)

    def same(want, got):
        return all([w[0] for w in a] == [g[0] for g in b]
                   and np.allclose([w[1] for w in a], [g[1] for g in b], atol=1e-5) for a, b in zip(want, got))

    return reference, ours_, same


def bert(folder: Path, threads: int):
    """BERT-base features of sentences: GluonNLP's ``BERTTokenizer``, ``BERTSentenceTransform``
    and ``BERTModel`` (pooler on) against the runner's ``features``; the batch is the number of
    sentences. The vocabulary is the sentences' words (the embedding size does not change the
    work per token)."""
    import gluon_hub
    import gluon_hub.runtime
    from gluon_hub.compat import mx
    from gluon_nlp_core.text import BERT_SPECIAL_TOKENS, Vocab

    import gluonnlp
    from gluonnlp.model import bert as ref_bert

    name = MODELS["bert"]
    words = " ".join(SENTENCES).lower().replace(".", " . ").replace(",", " , ").split()
    ref_vocab = gluonnlp.vocab.BERTVocab(gluonnlp.data.count_tokens(words))
    vocab = Vocab.from_tokens(ref_vocab.idx_to_token, **BERT_SPECIAL_TOKENS)
    if [vocab[t] for t in ref_vocab.idx_to_token] != list(range(len(ref_vocab))):
        raise SystemExit("the two vocabularies number their tokens differently")
    net, _ = ref_bert.get_bert_model(name, vocab=ref_vocab, pretrained=False, use_decoder=False,
                                     use_classifier=False)
    net.initialize(mx.init.Normal(0.02))
    net(mx.nd.ones((1, 4)), mx.nd.zeros((1, 4)), mx.nd.array([4]))
    params = folder / "bert.params"
    net.save_parameters(str(params))
    net.hybridize(static_alloc=True)
    path = folder / f"{name}.onnx"
    gluon_hub.export(name, path, format="onnx", pretrained=str(params), vocab_size=len(ref_vocab),
                     use_decoder=False, use_classifier=False)
    runner = gluon_hub.runtime.load(name, path, threads=threads, vocab=vocab, lower=True)
    transform = gluonnlp.data.BERTSentenceTransform(gluonnlp.data.BERTTokenizer(ref_vocab, lower=True),
                                                    max_seq_length=128, pair=False)

    def reference(texts):
        rows = [transform((text,)) for text in texts]
        width = max(int(length) for _, length, _ in rows)
        ids = np.stack([r[0][:width] for r in rows])
        segments = np.stack([r[2][:width] for r in rows])
        lengths = np.array([r[1] for r in rows], np.float32)
        sequence, pooled = net(mx.nd.array(ids), mx.nd.array(segments), mx.nd.array(lengths))
        sequence, pooled = sequence.asnumpy(), pooled.asnumpy()
        return [(ids[i, :n], sequence[i, :n], pooled[i]) for i, n in enumerate(lengths.astype(int))]

    def ours_(texts):
        return [(f["sequence"], f["pooled"]) for f in runner.features(texts, max_length=128)]

    def same(want, got):
        def close(a, b):
            return a.shape == b.shape and float(np.abs(a - b).max()) <= 1e-4 * max(float(np.abs(a).max()), 1e-30)

        return all(close(w[1], g[0]) and close(w[2], g[1]) for w, g in zip(want, got))

    ids = runner.encode(SENTENCES, max_length=128)[0]  # the same token ids: checked once, outside the timing
    if not all(np.array_equal(ids[i, :len(w)], w) for i, (w, _, _) in enumerate(reference(SENTENCES))):
        raise SystemExit(f"{name}: the runner's token ids differ from GluonNLP's")

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
                paths = (files[task] * batch)[:batch]
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
