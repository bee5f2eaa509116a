"""Export a classifier to ONNX beside MXNet's answers, for the tests that run without MXNet.

Run where MXNet is installed (``.ci/run``'s Python 3.11 leg)::

    .venv/bin/python scripts/export_onnx_fixtures.py .ci-artifacts/onnx

The folder gets ``cifar_resnet20_v1`` with He-initialised weights (a fixed seed) as an ONNX
file with a free batch axis, three PNG images (the photograph that ships with matplotlib and
two crops of it), MXNet's preprocessing of them for that model and for ``resnet50_v1d``
(shrink and crop), MXNet's outputs, and ``manifest.json`` naming it all. The MXNet-free leg
(Python 3.13, numpy 2) points ``GLUON_HUB_TEST_ONNX_DIR`` at it:
``tests/core/test_runtime_exported_files.py`` checks that ``gluon_hub.runtime`` there gives
the same arrays and ``gluon-hub predict --runtime onnx`` the same classes.

``bundle/`` holds one small model per task with a runner, each with fixed-seed random weights
(heads that random weights saturate moved into a trained model's range, as the portability
measurement does): ``gluon-hub predict NAME INPUT --params FILE --json`` recorded in MXNet, the
model converted with ``gluon_hub_deploy.convert`` (what ``gluon-hub convert NAME --params FILE
-o DIR`` runs) and packed by ``gluon-hub bundle`` into ``hub.tar``, beside the inputs. Only
that is kept: the weights and the mirror folder the files were published in are temporary.
The pose estimator's person detector is exported after ``reset_class(["person"])`` (as the MXNet
path resets it) and published as its converted file. ``transformer_en_de_512`` and Mask R-CNN
are too big or slow for CI, so small configurations of their specs are registered by a plugin
(``onnxfixtures/tiny_nmt``, and ``onnxfixtures/small_mask_rcnn``: ``mask_rcnn_resnet18_v1b_coco``
at a short side of 256 with 16 proposals; in the manifest, keyword arguments and input shape,
for the other side to register too); the Transformer is converted into its two graphs and
``gluon-hub translate-text --json`` recorded. The text models (BERT, GPT-2 and the standard
LSTM language model in small configurations) are exported graph by graph and published under
``default-GRAPH.onnx``, with MXNet's features, greedy tokens and log-probabilities.
``tests/core/test_runtime_bundle.py`` imports the bundle into a fresh cache without MXNet and
compares ``gluon-hub predict NAME INPUT --runtime onnx --json`` (and ``translate-text``) by
name, and the text runners, with these answers.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import PIL
from matplotlib import cbook
from PIL import Image

import gluon_hub
from gluon_cv_core.classification.transforms import eval_transform
from gluon_hub.compat import mx

MODEL = "cifar_resnet20_v1"
#: preprocessed by MXNet as well, for the resize-and-crop path the CIFAR model does not take
SHRUNK = "resnet50_v1d"
#: name: (top, left, height, width) of the photograph (600 x 512), None for all of it
CROPS = {"photo.png": None, "face.png": (40, 100, 300, 260), "wide.png": (300, 0, 180, 512)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="where to write the files (created if missing)")
    folder = parser.parse_args(argv).folder
    folder.mkdir(parents=True, exist_ok=True)

    photo = np.asarray(Image.open(cbook.get_sample_data("grace_hopper.jpg", asfileobj=False)).convert("RGB"))
    images = []
    for name, box in CROPS.items():
        top, left, height, width = box or (0, 0, *photo.shape[:2])
        Image.fromarray(photo[top : top + height, left : left + width]).save(folder / name)
        images.append(name)

    def preprocessed(model: str) -> np.ndarray:
        transform = eval_transform(model)
        return np.stack([transform(mx.image.imread(str(folder / name), to_rgb=True)).asnumpy() for name in images])

    mx.random.seed(0)
    net = gluon_hub.load(MODEL)
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    inputs = preprocessed(MODEL)
    outputs = net(mx.nd.array(inputs)).asnumpy()
    gluon_hub.export(net, folder / f"{MODEL}.onnx", format="onnx", input_shape=(1, *inputs.shape[1:]),
                     dynamic_batch=True)
    np.save(folder / f"{MODEL}.input.npy", inputs)
    np.save(folder / f"{MODEL}.mxnet.npy", outputs)
    np.save(folder / f"{SHRUNK}.input.npy", preprocessed(SHRUNK))
    manifest = {"model": MODEL, "onnx": f"{MODEL}.onnx", "images": images, "inputs": f"{MODEL}.input.npy",
                "outputs": f"{MODEL}.mxnet.npy", "shrunk": {"model": SHRUNK, "inputs": f"{SHRUNK}.input.npy"},
                "made_with": {"python": sys.version.split()[0], "mxnet": mx.__version__, "numpy": np.__version__,
                              "pillow": PIL.__version__}}
    with tempfile.TemporaryDirectory() as work:  # weights and the mirror folder: only the bundle is kept
        net.save_parameters(str(Path(work) / f"{MODEL}.params"))
        manifest["bundle"] = export_bundle(folder, Path(work) / f"{MODEL}.params", Path(work))
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"export_onnx_fixtures: {MODEL} and {len(images)} images with MXNet's answers, and "
          f"{len(manifest['bundle']['cases'])} tasks' models in {folder / 'bundle' / BUNDLE}")
    return 0


BUNDLE = "hub.tar"
#: the pose estimator's person detector (a COCO detector with a runner)
DETECTOR = "yolo3_mobilenet0.25_coco"
#: per case: the command (``predict`` unless named), model, inputs (files in bundle/, or sentences),
#: options of both runtimes, ``gap``: the JSON key of the results whose scores a ``--threshold``
#: is chosen between, and how close numbers must be: ``atol`` (plus ``rtol`` of the number, if
#: given) for probabilities, scores, fractions and depths, ``pixels`` for coordinates ("box", "x",
#: "y"), ``area`` (pixels, fraction) for mask areas: within the larger of the two
CASES = [
    {"model": MODEL, "inputs": ["photo.png"], "options": ["-k", "5"], "atol": 1e-5, "pixels": 0},
    # plain He weights: YOLOv3's trained-like heads put its logits at 8, where the sigmoids crowd
    # the best scores closer than the gap needs (1e-4); this small one does not saturate without
    {"model": "yolo3_mobilenet0.25_voc", "inputs": ["photo.png"], "options": [], "gap": "detections", "atol": 1e-5,
     "pixels": 1e-3, "trained_like": False},
    {"model": "hrnet_w18_small_v1_s", "inputs": ["face.png"], "options": ["-k", "21"], "atol": 1e-9, "pixels": 0},
    {"model": "simple_pose_resnet18_v1b", "inputs": ["photo.png"], "options": ["--detector", DETECTOR],
     "atol": 1e-5, "pixels": 1e-3},
    {"model": "inceptionv1_ucf101", "inputs": ["band.mp4"], "options": ["-k", "5"], "atol": 1e-6, "pixels": 0},
    # the tracker's JSON rounds boxes to 0.01 pixel: a rounding step apart, and no more
    {"model": "siamrpn_alexnet_v2_otb15", "inputs": ["square.avi"], "options": ["--box", "6", "8", "20", "22"],
     "atol": 1e-5, "pixels": 0.0101},
    # depths in metres: within the runner's 1e-4 relative (disparity heads scaled as trained ones)
    {"model": "monodepth2_resnet18_kitti_stereo_640x192", "inputs": ["face.png"], "options": [], "atol": 0,
     "rtol": 1e-4, "pixels": 0},
    # a small Mask R-CNN (short side 256, 16 proposals; trained-like heads), the threshold in a
    # gap between its scores; boxes within 1e-5 of the photograph's 600-pixel side, mask areas
    # within max(2 pixels, 0.1 %): pixels whose mask value is within rounding of 0.5 may flip
    {"model": "onnxfixtures/small_mask_rcnn", "inputs": ["photo.png"], "options": [], "gap": "instances",
     "atol": 1e-5, "pixels": 6e-3, "area": [2, 1e-3]},
    # beam search (the command's beam 4) on a small Transformer: the same subwords
    {"command": "translate-text", "model": "onnxfixtures/tiny_nmt",
     "inputs": ["w3@@ w7 w9", "w12 w5@@ w5 w30 w1 w17 w8", "w2", "w21 w33 w4@@ w19"],
     "options": ["--vocab", "nmt_vocab.json", "--max-length", "8", "--batch-size", "3"], "atol": 0, "pixels": 0},
]
#: models too big or slow for CI in their published size, registered small by a plugin of this
#: name in both processes (``transformer_en_de_512`` has 63 million parameters; Mask R-CNN resizes
#: images to a short side of 800): name -> (spec it copies, the keyword arguments it changes (the
#: Transformer's vocabulary size is added), its input shape or None for the copied one's; a
#: detector's last number is the short side ``predict`` resizes to)
SMALL_PLUGIN = "onnxfixtures"
SMALL = {"tiny_nmt": ("transformer_en_de_512", dict(num_layers=2, units=16, hidden_size=32, num_heads=4), None),
         "small_mask_rcnn": ("mask_rcnn_resnet18_v1b_coco", dict(rpn_test_post_nms=16), (3, 256, 256))}
#: the EOS score's raise in the small Transformer, so that some translations end before --max-length
NMT_EOS_BOOST = 0.75
#: the text models' small configurations (random weights; their graphs, not their size, are checked)
TEXT = {"bert_12_768_12": dict(num_layers=2, units=8, hidden_size=16, num_heads=2, max_length=64),
        "gpt2_117m": dict(num_layers=2, units=8, num_heads=2, max_length=32)}
BERT_WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "dog", "ran", "##s",
              "a", ".", "home"]
TEXTS, PAIRS = ["The cat sat on the mat.", "A dog ran home"], ["cats sat", "the dogs ran on a mat ."]
MERGES = "#version: 0.2\nh e\nt he\n\u0120 the\na t\nc at\n\u0120 cat\n\u0120 s\n\u0120s at\n"
CORPUS = "the cat sat on the mat. a dog ran home, the cats ran on"
PROMPT, NEW_TOKENS = "the cat sat on", 12
#: the LSTM language model's small configuration, the text it scores and the runner's chunk length
#: (shorter than the text: the states are carried across chunks)
LM, LM_CONFIG = "standard_lstm_lm_200", dict(embed_size=8, hidden_size=8)
LM_TEXT, LM_CHUNK = "w1 w5 w9 w3 w14\nw2 w2 w20 w7\n\nw11 w0 w25 w8 w17 w4 w6\nw13 w1", 5


def _he_weights(net: Any, *shapes: tuple[int, ...], seed: int) -> None:
    """He-initialised weights from ``seed`` (normalisation layers at their initial values)."""
    mx.random.seed(seed)
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    net(*[mx.nd.zeros(shape) for shape in shapes])


def _predict(args: list[str], cwd: Path, command: str = "predict") -> list[dict[str, Any]]:
    """``gluon-hub COMMAND ARGS --json`` in this process, run from ``cwd``: its JSON lines."""
    import os

    from gluon_hub.cli import main as hub

    here, out = os.getcwd(), io.StringIO()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out):
            code = hub([command, *args, "--json"])
    finally:
        os.chdir(here)
    if code != 0:
        raise RuntimeError(f"gluon-hub {command} {' '.join(args)} failed ({code})")
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _gap_threshold(scores: list[float], keep: int = 3, apart: float = 1e-4) -> float:
    """A score threshold that keeps at least ``keep`` boxes whose scores are each more than
    ``apart`` from the next (so their order is the network's, not float rounding), in the widest
    such gap among the best ten scores, so float differences between the runtimes cannot move
    a box across it."""
    best = sorted(scores, reverse=True)[:10]
    cuts = [i for i in range(keep - 1, len(best) - 1)
            if all(best[j] - best[j + 1] > apart for j in range(i))]
    if not cuts:
        raise ValueError(f"no {keep} scores {apart:g} apart among {best}; change the seed")
    gap = max(cuts, key=lambda i: best[i] - best[i + 1])
    return (best[gap] + best[gap + 1]) / 2


def _write_inputs(bundle: Path, photo: Path) -> None:
    """The photograph and a crop of it, a 40-frame video (a band moving down, the blue level
    stepping) and a 12-frame one of a square moving right and down (the tracked object)."""
    import cv2

    picture = Image.open(photo)
    picture.save(bundle / "photo.png")
    picture.crop((100, 40, 360, 340)).save(bundle / "face.png")
    writer = cv2.VideoWriter(str(bundle / "band.mp4"), cv2.VideoWriter_fourcc(*"mp4v"), 10, (64, 48))
    for i in range(40):
        frame = np.full((48, 64, 3), 30, np.uint8)
        frame[:, :, 2] = (i * 6) % 256
        frame[i:i + 8, :, 0] = 220
        writer.write(frame)
    writer.release()
    writer = cv2.VideoWriter(str(bundle / "square.avi"), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 64))
    for k in range(12):
        frame = np.full((64, 64, 3), 20, np.uint8)
        frame[8 + 2 * k:22 + 2 * k, 6 + 3 * k:20 + 3 * k] = (0, 140, 230)
        writer.write(frame)
    writer.release()


def _seeded_params(name: str, folder: Path, seed: int, trained_like: bool = True) -> Path:
    """``name`` with He weights from ``seed``, saved as ``.params``; heads that random weights
    saturate are moved into a trained model's range: SiamRPN's spread, and unless
    ``trained_like`` is false those of the families the portability measurement names
    (``TRAINED_LIKE``: Monodepth2's disparity, R-CNN heads ...)."""
    from gluon_hub._factory import import_object
    from gluon_hub_deploy._measure import TRAINED_LIKE

    spec = gluon_hub.info(name)
    net = gluon_hub.load(name)
    shapes = [(1, *i.shape) for i in (spec.input, *spec.extra_inputs)]
    _he_weights(net, *shapes, seed=seed)
    if spec.task == "object-tracking":
        _spread_siamrpn(net, shapes, seed)
    if trained_like and spec.factory in TRAINED_LIKE:
        scale = import_object(TRAINED_LIKE[spec.factory], f"the trained-like weights of {name!r}")
        scale(net, mx.nd.array(np.random.RandomState(seed).uniform(-1, 1, shapes[0])))
    path = folder / f"{spec.name}.params"
    net.save_parameters(str(path))
    return path


def _spread_siamrpn(net: Any, shapes: list[tuple[int, ...]], seed: int) -> None:
    """SiamRPN's last convolutions scaled so that its class logits spread by about 2 and its box
    offsets by about 0.2 on raw pixels: with plain random weights every score saturates and every
    box leaves the frame, and the runtimes would agree trivially."""
    rng = np.random.RandomState(seed)
    crops = [mx.nd.array(rng.uniform(0, 255, shape)) for shape in shapes]
    for head, output, spread in ((net.rpn_head.cls.head[3], 0, 2.0), (net.rpn_head.loc.head[3], 1, 0.2)):
        factor = spread / float(net(*crops)[output].asnumpy().std())
        head.weight.set_data(head.weight.data() * factor)
        head.bias.set_data(head.bias.data() * factor)


def _person_detector(photo: Path, work: Path, site: Path, seed: int) -> tuple[Path, float]:
    """The detector's 80-class ``.params`` in ``work`` (the MXNet path resets it to ``person``),
    its graph exported after that reset and published as its converted file in ``site``, and a
    score threshold between its persons on ``photo``."""
    from gluon_cv_core.detection.predict import detect

    net = gluon_hub.load(DETECTOR)
    _he_weights(net, (1, 3, 416, 416), seed=seed)
    params = work / f"{DETECTOR}.params"
    net.save_parameters(str(params))
    net.reset_class(["person"], reuse_weights=["person"])
    graph = work / f"{DETECTOR}-person.onnx"
    gluon_hub.export(net, graph, format="onnx", input_shape=(1, 3, 416, 416), dynamic_batch=True,
                     dynamic_spatial=True)
    gluon_hub.publish(graph, DETECTOR, site, tag="default.onnx", description=f"{DETECTOR} reset to person")
    ((_, found),) = detect(net, gluon_hub.info(DETECTOR), [str(photo)], 0.0)
    return params, _gap_threshold([d.score for d in found])


def _register_small(vocab_sizes: dict[str, int]) -> dict[str, Any]:
    """Registers :data:`SMALL`'s specs (for vocabularies of ``vocab_sizes``) under
    :data:`SMALL_PLUGIN` in this process; returns what the process without MXNet registers:
    each spec's name, the spec it copies, all its keyword arguments and its input shape."""
    import dataclasses
    import types

    from gluon_hub import hookimpl

    recorded: list[dict[str, Any]] = []
    for name, (like, kwargs, shape) in SMALL.items():
        sizes = {"vocab_size": vocab_sizes[name]} if name in vocab_sizes else {}
        recorded.append({"name": name, "like": like, "kwargs": {**gluon_hub.info(like).kwargs, **kwargs, **sizes},
                         "input_shape": list(shape) if shape else None})

    def spec(small: dict[str, Any]) -> Any:
        like = gluon_hub.info(small["like"])
        shape = small["input_shape"]
        return dataclasses.replace(like, name=small["name"], plugin="", kwargs=small["kwargs"],
                                   input=dataclasses.replace(like.input, shape=tuple(shape)) if shape else like.input)

    specs = [spec(s) for s in recorded]
    gluon_hub.register_plugin(types.SimpleNamespace(GLUON_HUB_API=">=1,<2",
                                                    gluon_hub_models=hookimpl(lambda: specs)), SMALL_PLUGIN)
    return {"plugin": SMALL_PLUGIN, "specs": recorded}


def _nmt_vocab(bundle: Path) -> Any:
    """The small Transformer's vocabulary, written to ``bundle/nmt_vocab.json``."""
    from gluon_nlp_core.text.vocab import Vocab, count_tokens

    vocab = Vocab(count_tokens(f"w{i}" for i in range(40)))
    (bundle / "nmt_vocab.json").write_text(vocab.to_json(), encoding="utf-8")
    return vocab


def _small_transformer(vocab: Any, work: Path) -> Path:
    """The small Transformer's seeded ``.params`` (in ``work``; its spec registered)."""
    net = gluon_hub.load(f"{SMALL_PLUGIN}/tiny_nmt")
    src = mx.nd.array([[5, 6, 7]])
    net(src, src, mx.nd.array([3]), mx.nd.array([3]))  # shapes the parameters
    rng = np.random.RandomState(0)
    for key, param in sorted(net.collect_params().items()):
        param.set_data(mx.nd.array(rng.normal(1.0 if key.endswith("gamma") else 0.0, 0.2, param.shape)))
    bias, eos = net.tgt_proj.bias.data(), vocab[vocab.eos_token]
    bias[eos] = bias[eos] + NMT_EOS_BOOST
    params = work / "tiny_nmt.params"
    net.save_parameters(str(params))
    return params


def _export_text(bundle: Path, work: Path, site: Path) -> dict[str, Any]:
    """BERT's features, GPT-2's greedy tokens and the LSTM language model's log-probabilities in
    MXNet, their graphs published in ``site`` (weights and graphs written in ``work``)."""
    import gluon_hub.runtime
    from gluon_nlp_core.decoding import BeamSearchSampler
    from gluon_nlp_core.text import BERT_SPECIAL_TOKENS, GPT2BPETokenizer, Vocab

    (bundle / "merges.txt").write_text(MERGES, encoding="utf-8")
    gpt2_words = ["<|endoftext|>", *dict.fromkeys(GPT2BPETokenizer(bundle / "merges.txt")(CORPUS))]
    vocabs = {"bert_12_768_12": Vocab.from_tokens(BERT_WORDS, **BERT_SPECIAL_TOKENS),
              "gpt2_117m": Vocab.from_tokens(gpt2_words, unknown_token=None, eos_token="<|endoftext|>")}
    nets, tags = {}, []
    for name, config in TEXT.items():
        kwargs = dict(config, vocab_size=len(vocabs[name]))
        net = gluon_hub.load(name, **kwargs)
        tokens = mx.nd.ones((1, 2))
        net(*((tokens, tokens, mx.nd.array([2]), mx.nd.zeros((1, 1))) if name.startswith("bert") else (tokens,)))
        rng = np.random.RandomState(0)
        for key, param in sorted(net.collect_params().items()):
            param.set_data(mx.nd.array(rng.normal(1.0 if key.endswith("gamma") else 0.0, 0.4, param.shape)))
        net.save_parameters(str(work / f"{name}.params"))
        for graph in gluon_hub.export(name, work / f"{name}.onnx", format="onnx",
                                      pretrained=str(work / f"{name}.params"), **kwargs):
            tag = f"default{graph.stem.removeprefix(name)}.onnx"  # default-GRAPH.onnx, or a lone graph default.onnx
            gluon_hub.publish(graph, name, site, tag=tag, description=f"{name}'s small configuration, one graph")
            tags.append(f"{name}:{tag}")
        nets[name] = net
    # the runners' own encoding (tokenizers only) gives the ids both runtimes are fed
    options = {"bert_12_768_12": dict(vocab=vocabs["bert_12_768_12"], lower=True, max_length=64),
               "gpt2_117m": dict(vocab=vocabs["gpt2_117m"], merges=bundle / "merges.txt", max_length=32)}
    encoder = gluon_hub.runtime.load("bert_12_768_12", work / "bert_12_768_12.onnx", **options["bert_12_768_12"])
    ids, segments, lengths = encoder.encode(TEXTS, PAIRS)
    masked = mx.nd.zeros((len(TEXTS), 1))  # the masked-LM head's positions: no feature depends on them
    sequence, pooled = nets["bert_12_768_12"](mx.nd.array(ids), mx.nd.array(segments), mx.nd.array(lengths),
                                              masked)[:2]
    generator = gluon_hub.runtime.load("gpt2_117m", work / "gpt2_117m.onnx", **options["gpt2_117m"])
    prompt = generator.encode(PROMPT)
    gpt2 = nets["gpt2_117m"]

    def step(tokens: Any, states: Any) -> Any:
        scores, states = gpt2(tokens.reshape((-1, 1)).astype("float32"), states)
        return scores[:, -1], states

    _, states = gpt2(mx.nd.array([prompt[:-1]]))
    sampler = BeamSearchSampler(1, step, eos_id=generator.eos_id, max_length=NEW_TOKENS)
    samples, _, length = sampler(mx.nd.array(prompt[-1:]), states)
    greedy = samples[0, 0, 1:int(length[0, 0].asscalar())].asnumpy().astype(int).tolist()
    lm, lm_tags = _export_language_model(bundle, work, site)
    return {"tags": tags + lm_tags, "lm": lm, "bert_words": BERT_WORDS, "gpt2_words": gpt2_words, "merges": "merges.txt",
            "texts": TEXTS, "pairs": PAIRS, "prompt": PROMPT, "new_tokens": NEW_TOKENS,
            "bert": {"ids": ids.tolist(), "lengths": lengths.tolist(), "sequence": sequence.asnumpy().tolist(),
                     "pooled": pooled.asnumpy().tolist(), "rtol": 1e-4},
            "gpt2": {"prompt_ids": prompt, "greedy": greedy}}


def _export_language_model(bundle: Path, work: Path, site: Path) -> tuple[dict[str, Any], list[str]]:
    """The small LSTM language model's ``step`` graph published in ``site``, its vocabulary
    (``bundle/lm_vocab.json``) and MXNet's log-probabilities of :data:`LM_TEXT` over the whole
    sequence at once (the runner runs it in chunks, carrying the states)."""
    from gluon_nlp_core.text.vocab import Vocab, count_tokens

    vocab = Vocab(count_tokens(f"w{i}" for i in range(26)))
    (bundle / "lm_vocab.json").write_text(vocab.to_json(), encoding="utf-8")
    kwargs = dict(LM_CONFIG, vocab_size=len(vocab))
    net = gluon_hub.load(LM, **kwargs)
    net(mx.nd.ones((2, 1)), net.begin_state(batch_size=1))  # shapes the parameters
    rng = np.random.RandomState(0)
    for _, param in sorted(net.collect_params().items()):
        param.set_data(mx.nd.array(rng.normal(0.0, 0.5, param.shape)))
    params = work / f"{LM}.params"
    net.save_parameters(str(params))
    tags = []
    for graph in gluon_hub.export(LM, work / f"{LM}.onnx", format="onnx", pretrained=str(params), **kwargs):
        tag = f"default{graph.stem.removeprefix(LM)}.onnx"
        gluon_hub.publish(graph, LM, site, tag=tag, description=f"{LM}'s small configuration, one graph")
        tags.append(f"{LM}:{tag}")
    # the ids the runner reads the text as: the end-of-sentence token first and after each line
    eos, lines = vocab.eos_token, [line.split() for line in LM_TEXT.splitlines() if line.split()]
    ids = vocab[[eos, *(token for line in lines for token in (*line, eos))]]
    scores, _ = net(mx.nd.array(ids[:-1]).reshape((-1, 1)), net.begin_state(batch_size=1))
    logits = scores.asnumpy()[:, 0].astype(np.float64)
    logits -= logits.max(axis=1, keepdims=True)
    log_probs = (logits - np.log(np.exp(logits).sum(axis=1, keepdims=True)))[np.arange(len(ids) - 1), ids[1:]]
    return {"model": LM, "vocab": "lm_vocab.json", "text": LM_TEXT, "ids": ids, "log_probs": log_probs.tolist(),
            "perplexity": float(np.exp(-log_probs.mean())), "chunk": LM_CHUNK, "atol": 1e-5}, tags


def export_bundle(folder: Path, classifier_params: Path, work: Path) -> dict[str, Any]:
    """``folder/bundle``: each case's inputs, MXNet's ``--json`` answers, and the bundle of the
    converted files (the weights and the mirror folder they were published in stay in ``work``);
    returns the manifest's ``bundle`` entry."""
    from gluon_hub.cli import main as hub
    from gluon_hub_deploy import convert

    bundle, site = folder / "bundle", work / "site"
    shutil.rmtree(bundle, ignore_errors=True)
    bundle.mkdir()
    site.mkdir()
    _write_inputs(bundle, folder / "photo.png")
    nmt_vocab = _nmt_vocab(bundle)
    small = _register_small({"tiny_nmt": len(nmt_vocab)})
    cases, tags = [], []
    for seed, case in enumerate(CASES):
        case = dict(case, options=list(case["options"]))
        name, command = str(case["model"]), str(case.get("command", "predict"))
        if command == "translate-text":
            params = _small_transformer(nmt_vocab, work)
        else:
            params = (classifier_params if name == MODEL
                      else _seeded_params(name, work, seed, bool(case.get("trained_like", True))))
        mxnet_only = ["--params", str(params)]
        if "gap" in case:  # a threshold in a gap between its results' scores
            found = _predict([name, *case["inputs"], *mxnet_only, "--threshold", "0"], bundle)
            scores = [item["score"] for item in found[0][case["gap"]]]
            case["options"] += ["--threshold", f"{_gap_threshold(scores):.6f}"]
        if "--detector" in case["options"]:
            detector_params, threshold = _person_detector(bundle / "photo.png", work, site, seed)
            mxnet_only += ["--detector-params", str(detector_params)]
            case["options"] += ["--threshold", f"{threshold:.6f}"]
            tags.append(f"{DETECTOR}:default.onnx")
        case["mxnet"] = _predict([name, *case["inputs"], *case["options"], *mxnet_only], bundle, command)
        tags += [f"{name}:{converted.tag}" for converted in convert([name], site, params=params, progress=False)]
        cases.append(case)
    text = _export_text(bundle, work, site)
    tags += text["tags"]
    if hub(["bundle", *tags, "--from-dir", str(site), "-o", str(bundle / BUNDLE)]) != 0:
        raise RuntimeError("gluon-hub bundle failed")
    return {"file": f"bundle/{BUNDLE}", "folder": "bundle", "small": small, "cases": cases, "text": text}


if __name__ == "__main__":
    sys.exit(main())
