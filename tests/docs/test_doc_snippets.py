"""The shell and Python snippets of the README, docs/*.md and the plugin READMEs run as shown.

The rule (issue 29, item 12). Every fenced block tagged ``bash``, ``sh``, ``shell``,
``console`` or ``python`` is a snippet; untagged blocks are output or layouts and never run, so
a block of commands must carry a tag. A ``console`` block is one snippet per ``$ `` command
(lines after it are its output); any other block is one snippet. Each snippet is listed in
``SNIPPETS`` below under its file and its first line that is not blank, a comment or an
import (``#2`` for the second such line in one file) with one verdict:

- ``RUN``: it runs as shown and exits 0;
- ``NETWORK``: it needs published files, so it runs offline (``GLUON_HUB_OFFLINE=1``) and
  must stop only because of that (the cache's "GLUON_HUB_OFFLINE=1 forbids downloading"):
  its commands, arguments and API calls are checked up to the download;
- any other string: why it is not run (it installs packages, needs the reader's own files or
  plugin, a GPU, a C++ toolchain, root, or runs for hours).

A snippet that continues a walk-through names, in ``AFTER``, the snippet of its document that
must run first in the same folder. A snippet missing from the table, or listed but gone from
the docs, fails the test, so a new snippet gets a verdict when it is written. Each one runs in its own temp dir (``HOME`` too),
with an empty cache, no config, and this environment's ``python`` and ``gluon-hub`` first on
``PATH``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUN, NETWORK = "run", "network"
OFFLINE_STOP = "GLUON_HUB_OFFLINE=1 forbids downloading"
LANGUAGES = {"bash": "bash", "sh": "bash", "shell": "bash", "console": "bash", "python": "python"}

INSTALLS = "installs into the environment (tests/packaging and tests/plugin_template install from wheels in scratch venvs)"
READERS = "a fragment: it uses the reader's own objects or files"
SERVES = "serves until stopped; tests/browser/test_catalogue_browser.py runs it"
TRAINS = "a training or evaluation run on a real dataset (hours); the scripts' tests run them on generated data"
CONVERTED = ("needs the files convert writes from published weights; plugins/gluon-hub-deploy/tests/"
             "test_convert.py runs these steps on generated weights, in a venv without MXNet")

SNIPPETS: dict[str, dict[str, str]] = {
    "README.md": {
        "bash scripts/main-job.sh   # set up .venv, then run the main job end to end (no internet needed)":
            "sets up a venv and runs the whole main job (minutes); tests/test_main_job.py runs it",
        'pip install ".[mxnet]"                     # the core, with the CPU build of MXNet': INSTALLS,
        'pip install ".[onnxruntime]" ./plugins/gluon-cv-core   # Python 3.10-3.13, numpy 2, no MXNet': INSTALLS,
        'gluon_hub.list_models("resnet*", pretrained=True)   # names; imports no mxnet': NETWORK,
        "gluon-hub list 'mobilenet*' --pretrained": RUN,
        "gluon-hub info resnet50_v1d": RUN,
        "gluon-hub plugins                 # each plugin with version, status and error": RUN,
        "gluon-hub search bert             # installed or not: says what to pip install": RUN,
        "gluon-hub predict resnet50_v1d photo.jpg --pretrained   # added by gluon-cv-core; downloads only with --pretrained":
            "needs the reader's photo.jpg (the cv plugin's tests run predict on generated images)",
        "gluon-hub predict resnet50_v1d photo.jpg --runtime onnx --model-file r50.onnx   # onnxruntime, no MXNet":
            "needs r50.onnx, exported from published weights",
        'gluon-hub translate-text transformer_en_de_512 "the cat sat on the mat ." --pretrained   # added by gluon-nlp-core':
            NETWORK,
        "gluon-hub deploy resnet50_v1d --lang cpp -o r50-cpp --pretrained   # or java, clojure: docs/deploy.md": NETWORK,
        "gluon-hub cache ls | verify | purge | prefetch resnet50_v1d   # prefetch for air-gapped clusters":
            "shorthand for four commands; docs/cache.md runs them one by one",
        "gluon-hub publish net.params --name my_net --out mirror/    # weights file named by its hash": READERS,
        "gluon-hub serve mirror/                                     # a mirror on a loopback or LAN address":
            "serves until stopped; tests/publishing/test_walkthrough.py runs it",
        "gluon-hub catalogue -o catalogue/   # every model, dataset and embedding as a site to browse offline: "
        "docs/catalogue.md": RUN,
        "gluon-hub bundle resnet50_v1d -o weights.tar && gluon-hub import weights.tar": NETWORK,
        "gluon-hub convert resnet50_v1d --pretrained -o site/   # ONNX (or --format safetensors) by hash: docs/convert.md":
            NETWORK,
        "gluon-hub new-plugin my-plugin        # a complete third-party plugin project": RUN,
        "gluon-hub check-plugin my-plugin      # the conformance kit (gluon_hub.testing)":
            "needs the new plugin installed; tests/publishing/test_walkthrough.py does that",
        'GLUON_HUB_API = ">=1,<2"': RUN,
        'photos = {"person": [np.asarray(Image.open(matplotlib.cbook.get_sample_data("grace_hopper.jpg")))],':
            RUN,  # the fine-tuning photographs, from the [demo] extra
        "python -m gluon_cv_core.classification.train --model mobilenet0.25 --pretrained --classes 2 \\": NETWORK,
        "ls finetuned": "lists what the training run above writes",
        "gluon-hub predict mobilenet0.25 photos/val/person/0.jpg \\":
            "needs the training run above; plugins/gluon-cv-core/tests/test_finetune_heads.py runs these steps",
    },
    "docs/cache.md": {
        'path = gluon_hub.fetch(FileRef(hash="sha256:...", size=1234, filename="gluon/dataset/x.txt"))':
            "a FileRef with a placeholder hash (sha256:...)",
        "gluon-hub cache prefetch resnet50_v1d            # every weight variant (or --tag T)": NETWORK,
        "gluon-hub cache prefetch --kind datasets squad   # a dataset's files": NETWORK,
        "gluon-hub cache prefetch glove.6B.50d            # a word embedding's file (without --kind: the": NETWORK,
        "gluon-hub cache prefetch book_corpus_wiki_en_uncased   # a vocabulary or tokenizer file (BERT's token list)":
            NETWORK,
        "gluon-hub cache ls                               # files, sizes, total": RUN,
        "gluon-hub cache verify                           # re-hash everything; changed files are removed": RUN,
        "gluon-hub cache purge resnet50_v1d               # or a file name, a full hash; all without NAME": RUN,
        "gluon-hub cache dir                              # cache, shared caches, mirrors, config file": RUN,
    },
    "docs/data.md": {
        "batchify_fn = Tuple(Pad(pad_val=0), Stack())": READERS,
    },
    "docs/deploy.md": {
        "gluon-hub deploy resnet50_v1d --lang cpp -o r50-cpp --pretrained   # or --params net.params": NETWORK,
        "r50-cpp/build.sh": "needs the project the line above writes from published weights, and g++",
        "r50-cpp/run photo.ppm": "needs the built project and the reader's photo",
        "mkdir -p DIR/lib && cp $MXNET/libmxnet.so $MXNET/libopenblas.so.0 $MXNET/libgfortran.so.3 DIR/lib/":
            "DIR and $MXNET are placeholders",
        "apt-get install -y --no-install-recommends g++ openjdk-17-jdk-headless libjna-java clojure":
            "installs system packages as root",
    },
    "docs/plugins.md": {
        "gluon-hub new-plugin gluon-hub-mymodels      # writes ./gluon-hub-mymodels/":
            "pip install -e needs the package index for its build backend; "
            "tests/plugin_template/test_new_plugin.py runs these steps from a wheel",
        'GLUON_HUB_API = ">=1,<2"          # the plugin-contract versions this plugin supports': RUN,
        "export GLUON_HUB_PREFER_PLUGINS=cv            # comma-separated, first listed wins": RUN,
        "ModelSpec(": READERS,
        'input=InputSpec(shape=(None,), layout="NT", dtype="int32"),': READERS,
        "from gluon_hub.compat import mx": RUN,
        '@head_argument("classes")                 # or "nclass", "num_joints" ...': RUN,
        'subprocess.run([sys.executable, "-c",': RUN,
        "WeightVariant(": "a placeholder hash and URL",
        "gluon-hub check-plugin gluon-hub-mymodels                 # by distribution or plugin name":
            "needs the reader's plugin installed; tests/publishing/test_walkthrough.py checks one",
        "def test_conforms():":
            "needs the reader's plugin installed",
        "bash scripts/build-wheels.sh                       # dist/gluon_hub-*.whl, dist/gluon_cv_core-*.whl ...":
            "builds every wheel (the package index for setuptools, minutes); tests/core/test_install_hint.py runs it",
    },
    "docs/onnx.md": {
        'gluon_hub.export("resnet50_v1d", "r50.onnx", format="onnx", pretrained=True,': NETWORK,
        'files = gluon_hub.export("gpt2_117m", "gpt2.onnx", format="onnx", pretrained=True)': NETWORK,
        "gluon-hub info mobilenet1.0                # the last line is the ONNX row": RUN,
        "gluon-hub list --portable                  # only the measured, exportable models": RUN,
        "gluon_hub.list_models(portable=True)": RUN,
        "gluon-hub portability mobilenet0.25 cifar_resnet20_v1   # measure and print these models' rows": RUN,
        "gluon-hub portability --per-family --write    # the smallest model of each family (factory), stored":
            "rewrites the installed plugins' portability.json (minutes); "
            "plugins/gluon-hub-deploy/tests/test_portability_command.py runs --write on a throwaway plugin",
        "gluon-hub portability --missing --write       # everything not yet measured on its current spec":
            "rewrites the installed plugins' portability.json (an hour for the whole zoo)",
        "gluon-hub registry build                      # copy the rows into registry.json":
            "rewrites the checkout's registry.json; .ci/run runs 'registry check'",
        "gluon-hub list --portability-summary            # per task: exportable, blocked by class, not yet measured":
            RUN,
        "gluon-hub list --portability-summary --by family   # one row per family (models sharing a factory)": RUN,
        "gluon-hub list --portability-summary --index --format markdown   # registry.json's rows, no plugins needed":
            RUN,
        "python scripts/portability_table.py             # rewrite README's table from the stored rows":
            "rewrites the checkout's README.md; tests/docs/test_portability_table.py runs it on a copy "
            "and fails while README's table differs from the rows",
        'classifier = gluon_hub.runtime.load("resnet50_v1d", "r50.onnx")   # or no file: the converted one in the cache':
            READERS,
        'encoder = gluon_hub.runtime.load("bert_12_768_12", "bert.onnx")      # bert-valid_length.onnx':
            READERS + " (plugins/gluon-nlp-core/tests/test_onnx_runners.py runs the text runners)",
        'gluon_hub.runtime.load("resnet50_v1d", "r50.onnx",':
            "needs a GPU and onnxruntime-gpu; tests/core/test_runtime_load.py checks the provider errors on the CPU",
    },
    "docs/convert.md": {
        "gluon-hub convert resnet50_v1d mobilenet1.0 --pretrained -o site/": NETWORK,
        "gluon-hub bundle resnet50_v1d:default.onnx --from-dir site/ -o onnx.tar": CONVERTED,
        "gluon-hub import onnx.tar": CONVERTED,
        'path = fetch_converted("resnet50_v1d")            # format="onnx"; tag="default" or "default.onnx"':
            CONVERTED,
        'net = gluon_hub.load("my_net", pretrained=Path("site/my_net-3f0c1e9a2b77.safetensors"))': READERS,
    },
    "docs/bench.md": {
        "gluon-hub bench mobilenet0.25 resnet18_v1 resnet50_v1 --runtime mxnet,onnx --batch 1,8 -o results.csv "
        "--chart chart.html":
            "measures twelve cases in full (a minute or more); plugins/gluon-hub-deploy/tests/test_bench.py "
            "runs the command with --quick",
        "gluon-hub bench --task image-classification --runtime onnx --quick   # every classifier, briefly":
            "exports and times every classifier (half an hour or more)",
        "gluon-hub bench mobilenet0.25 --size 64 --quick --chart chart.svg     # a smoke test: seconds": RUN,
    },
    "docs/catalogue.md": {
        "gluon-hub catalogue -o catalogue/": RUN,
        "gluon-hub serve mirror/                     # also serves a fresh catalogue at URL/catalogue/": SERVES,
        "gluon-hub serve mirror/ --catalogue catalogue/": SERVES,
    },
    "docs/lock.md": {
        "gluon-hub lock resnet50_v1d bert_12_768_12 --dataset squad -o gluon-hub.lock": RUN,
        "gluon-hub lock --check -o gluon-hub.lock": RUN,
        'net = gluon_hub.load("resnet50_v1d", pretrained=True, lock="gluon-hub.lock")': NETWORK,
    },
    "docs/publishing.md": {
        "net = train_my_textcnn()                       # any trained gluon Block": READERS,
        "gluon-hub publish textcnn.params --name my_textcnn --out site/ \\": READERS,
        'GLUON_HUB_API = ">=1,<2"': RUN,
        "export GLUON_HUB_MIRRORS=https://weights.example.org/site/": "an example host",
        'python -c "import gluon_hub; gluon_hub.load(\'my_textcnn\', pretrained=True)"': "an example host",
        "gluon-hub serve site/ --port 0": "serves until stopped; the next snippet runs it in the background",
        "gluon-hub serve site/ --port 0 > serve.log &":
            "needs the reader's site/ and plugin; tests/publishing/test_walkthrough.py runs these steps",
        'with serve("site/") as server:            # port 0: a free port': READERS,
        "GLUON_HUB_MIRRORS=$(sed -n '1s/.* at //p' serve.log) gluon-hub check-plugin my_plugin --check-weights":
            "needs the reader's plugin; tests/publishing/test_walkthrough.py runs it",
        "gluon-hub bundle my_textcnn resnet50_v1d:default -o weights.tar": READERS,
        "gluon-hub bundle my_textcnn -o weights.tar --from-dir site/   # straight from publish": READERS,
        "gluon-hub import weights.tar": READERS,
        "GLUON_HUB_OFFLINE=1 python -c \"import gluon_hub; gluon_hub.load('my_textcnn', pretrained=True)\"": READERS,
    },
    "plugins/gluon-contrib/README.md": {
        "python -m gluon_contrib.train_textcnn --format trec --train train_5500.label --test TREC_10.label \\": TRAINS,
    },
    "plugins/gluon-cv-core/README.md": {
        'gluon_hub.list_models("resnet*_v1d", pretrained=True)   # no mxnet import': NETWORK,
        'test = gluon_hub.load_dataset("cifar10", segment="test")            # through the cache': NETWORK,
        'gluon_hub.export("resnet50_v1d", "deploy/resnet50_v1d", pretrained=True)': NETWORK,
        "gluon-hub predict resnet50_v1d cat.jpg dog.png --topk 5 --pretrained   # downloads the weights once":
            "needs the reader's images; tests/classification/test_predict_and_scripts.py runs predict on generated ones",
        "python -m gluon_cv_core.classification.train --model resnet50_v1d --data-dir ~/imagenet \\": TRAINS,
        "python -m gluon_cv_core.launch -n 4 -s 4 -H hosts --launcher ssh \\": "needs four machines",
        "python -m gluon_cv_core.detection.train --model ssd_512_resnet50_v1_voc --dataset voc \\": TRAINS,
        "python -m gluon_cv_core.segmentation.train --model fcn_resnet50_voc --dataset voc_aug \\": TRAINS,
        "python -m gluon_cv_core.detection.train_instance --model mask_rcnn_fpn_resnet50_v1b_coco --dataset coco \\": TRAINS,
        "python -m pytest plugins/gluon-cv-core/tests -q": "the plugin's whole test suite (its own CI step)",
    },
    "plugins/gluon-nlp-core/README.md": {
        "vocab = Vocab(count_tokens(words), min_freq=2)          # indices as gluonnlp.Vocab gives them": READERS,
        'matrix, found = embedding_matrix("glove.840B.300d.txt", vocab, scale=0.25, seed=0)': READERS,
        'list_embedding_sources("glove")                 # names; also "fasttext", "word2vec"': NETWORK,
        'gluon_hub.load_dataset("squad", segment="train", version="2.0")': NETWORK,
        'emb = load_embedding("glove.6B.50d")': NETWORK,
        "gluon-hub search glove                          # every kind; --kind embeddings for these only": RUN,
        "gluon-hub list --kind embeddings 'cc.de*'       # NAME, FAMILY, DIM, DESCRIPTION": RUN,
        "gluon-hub info glove.6B.50d                     # file, sha1, and the prefetch command": RUN,
        "gluon-hub cache prefetch glove.6B.50d           # for offline use; or carry it:": NETWORK,
        "gluon-hub bundle glove.6B.50d -o glove.tar      # then 'gluon-hub import glove.tar' elsewhere": NETWORK,
        'gluon_hub.list_embeddings("glove.6B.*")          # names, as list_models': NETWORK,
        "gluon-hub search bert_12_768_12 --kind vocabularies   # the vocabularies BERT-base's weights use": RUN,
        "gluon-hub list --kind vocabularies                    # NAME, FAMILY, TOKENS, DESCRIPTION": RUN,
        "gluon-hub info openai_webtext_bpe_ranks               # file, sha1, and the prefetch command": RUN,
        "gluon-hub cache prefetch book_corpus_wiki_en_uncased  # for offline use; or carry it:": NETWORK,
        "gluon-hub bundle book_corpus_wiki_en_uncased -o vocab.tar": NETWORK,
        "gluon-hub lock --vocabulary book_corpus_wiki_en_uncased -o gluon-hub.lock": RUN,
        'gluon_hub.list_vocabularies("*uncased*")                          # names, as list_models': NETWORK,
        'gluon_hub.info("bert_12_768_12").weights[3].description   # "vocabulary \'wiki_multilingual_cased\' (119547 tokens); keep the case"':
            NETWORK,
        'bert = gluon_hub.load("bert_12_768_12", pretrained=False, use_decoder=False, use_classifier=False)':
            RUN,  # the fine-tuning head; plugins/gluon-nlp-core/tests/test_quiet_heads.py too
        'gluon-hub translate-text transformer_en_de_512 "the cat sat on the mat ." --beam-size 4 --pretrained': NETWORK,
        "python -m gluon_nlp_core.scripts.finetune_classifier --task mrpc --data-dir glue/MRPC \\": TRAINS,
    },
}

#: (document, snippet) -> the snippet of that document to run first, in the same folder
AFTER = {
    ("docs/lock.md", "gluon-hub lock --check -o gluon-hub.lock"):
        "gluon-hub lock resnet50_v1d bert_12_768_12 --dataset squad -o gluon-hub.lock",
    ("docs/lock.md", 'net = gluon_hub.load("resnet50_v1d", pretrained=True, lock="gluon-hub.lock")'):
        "gluon-hub lock resnet50_v1d bert_12_768_12 --dataset squad -o gluon-hub.lock",
    ("README.md", "python -m gluon_cv_core.classification.train --model mobilenet0.25 --pretrained --classes 2 \\"):
        'photos = {"person": [np.asarray(Image.open(matplotlib.cbook.get_sample_data("grace_hopper.jpg")))],',
}


def _blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block."""
    found, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        opening = re.match(r"^```(\w*)\s*$", lines[i])
        if opening:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            found.append((opening.group(1), "\n".join(lines[i + 1:end])))
            i = end
        i += 1
    return found


def _console_commands(body: str) -> list[str]:
    """Each ``$ `` command of a console block, with its backslash continuation lines."""
    commands: list[str] = []
    lines = body.splitlines()
    for n, line in enumerate(lines):
        prompt = re.match(r"^\w*\$ +", line)
        if prompt:
            command = [line[prompt.end():]]
            while command[-1].endswith("\\") and n + len(command) < len(lines):
                command.append(lines[n + len(command)])
            commands.append("\n".join(command))
    return commands


def _first_line(code: str) -> str:
    """The snippet's first line that is not blank, a comment or an import: its name in
    ``SNIPPETS`` (comments and imports change more often than the code they introduce)."""
    lines = [line for line in code.splitlines() if line.strip()]
    plain = [line for line in lines if not re.match(r"^(import |from \S+ import |\s*#)", line)]
    return (plain or lines or [""])[0]


def snippets() -> list[tuple[str, str, str, str]]:
    """(doc, key, language, code) of every snippet in the documents the test covers."""
    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted(REPO.glob("plugins/*/README.md"))]
    found = []
    for doc in docs:
        name = doc.relative_to(REPO).as_posix()
        seen: dict[str, int] = {}
        for language, body in _blocks(doc.read_text()):
            if language not in LANGUAGES:
                continue
            codes = _console_commands(body) if language == "console" else [body]
            for code in codes:
                first = _first_line(code)
                seen[first] = seen.get(first, 0) + 1
                key = first if seen[first] == 1 else f"{first} #{seen[first]}"
                found.append((name, key, LANGUAGES[language], code))
    return found


ALL = snippets()


def test_every_snippet_has_a_verdict_and_every_verdict_a_snippet():
    present = {(doc, key) for doc, key, _, _ in ALL}
    listed = {(doc, key) for doc, keys in SNIPPETS.items() for key in keys}
    assert not present - listed, f"snippets without a verdict in SNIPPETS: {sorted(present - listed)}"
    assert not listed - present, f"verdicts for snippets no longer in the docs: {sorted(listed - present)}"


@pytest.mark.parametrize("doc, key, language, code", [
    pytest.param(*s, id=f"{s[0]}:{s[1][:60]}") for s in ALL
    if SNIPPETS.get(s[0], {}).get(s[1]) in (RUN, NETWORK)
])
def test_snippet_runs_as_documented(tmp_path, doc, key, language, code):
    verdict = SNIPPETS[doc][key]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GLUON_HUB_")}
    env.update(HOME=str(tmp_path), GLUON_HUB_HOME=str(tmp_path / "cache"), GLUON_HUB_OFFLINE="1",
               GLUON_HUB_CONFIG=str(tmp_path / "no-config.json"), GLUON_HUB_PROGRESS="0",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    if (doc, key) in AFTER:
        first = next(s for s in ALL if s[:2] == (doc, AFTER[doc, key]))
        before = _run(first[2], first[3], tmp_path, env)
        assert before.returncode == 0, f"{doc}: {first[1]}\n{before.stdout}{before.stderr}"
    result = _run(language, code, tmp_path, env)
    output = result.stdout + result.stderr
    if verdict == RUN:
        assert result.returncode == 0, f"{doc}: {key}\n{output}"
    else:
        assert result.returncode != 0 and OFFLINE_STOP in output, (
            f"{doc}: {key} should stop only for want of the network\n{output}")


def _run(language: str, code: str, folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    command = ["bash", "-e", "-c", code] if language == "bash" else [sys.executable, "-c", code]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=300)
