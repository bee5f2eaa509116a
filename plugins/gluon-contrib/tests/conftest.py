"""Fixtures of gluon-contrib's tests: a fresh hub per test and tiny generated data."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

import gluon_hub


@pytest.fixture(autouse=True)
def fresh_hub(monkeypatch: pytest.MonkeyPatch):
    """Every test discovers the installed plugins anew, with no hub variables set."""
    for var in ("GLUON_HUB_DISABLE_PLUGIN_AUTOLOAD", "GLUON_HUB_DISABLE_PLUGINS",
                "GLUON_HUB_STRICT_PLUGINS", "GLUON_HUB_INDEX"):
        monkeypatch.delenv(var, raising=False)
    yield gluon_hub.reset_hub()
    gluon_hub.reset_hub()


def _blob_image(rng: np.random.Generator, size: int, domain: str) -> np.ndarray:
    """A disc on a background; the two domains differ in colours, as horses and zebras do."""
    yy, xx = np.mgrid[0:size, 0:size]
    cx, cy = rng.uniform(size * 0.25, size * 0.75, 2)
    disc = ((xx - cx) ** 2 + (yy - cy) ** 2 < (size / 4) ** 2).astype(np.float32)
    image = np.zeros((size, size, 3), np.float32)
    if domain == "a":
        image[..., 0], image[..., 2] = 200 * disc + 30, 60
    else:
        image[..., 1], image[..., 2] = 180 * disc + 40, 140 * (1 - disc)
    return image.astype(np.uint8)


@pytest.fixture(scope="session")
def image_domains(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two folders of four unpaired 40x40 PNG images each."""
    from PIL import Image

    root = tmp_path_factory.mktemp("domains")
    rng = np.random.default_rng(0)
    folders = []
    for domain in ("a", "b"):
        folder = root / domain
        folder.mkdir()
        for i in range(4):
            Image.fromarray(_blob_image(rng, 40, domain)).save(folder / f"{i}.png")
        folders.append(folder)
    return folders[0], folders[1]


POSITIVE, NEGATIVE = ("good", "great", "fine"), ("bad", "awful", "dull")
FILLER = "the a movie film plot actor story scene it was is this really quite".split()


def toy_sentence(rng: random.Random, label: int) -> str:
    """Filler words and one word that decides the label: a set a textCNN can learn."""
    words = [rng.choice(FILLER) for _ in range(rng.randint(4, 9))]
    words.insert(rng.randrange(len(words)), rng.choice(POSITIVE if label else NEGATIVE))
    return " ".join(words)


@pytest.fixture(scope="session")
def sst_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Kim's SST format (``label sentence``): 80 training and 20 test sentences."""
    root = tmp_path_factory.mktemp("sst")
    rng = random.Random(0)
    paths = []
    for name, count in (("train.txt", 80), ("test.txt", 20)):
        lines = [f"{i % 2} {toy_sentence(rng, i % 2)}" for i in range(count)]
        (root / name).write_text("\n".join(lines) + "\n")
        paths.append(root / name)
    return paths[0], paths[1]


@pytest.fixture(scope="session")
def word2vec_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """8-d vectors in word2vec's text format; the first axis separates the label words."""
    rng = random.Random(1)
    words = list(POSITIVE + NEGATIVE) + FILLER[:4]
    lines = [f"{len(words)} 8"]
    for word in words:
        vector = [rng.uniform(-1, 1) for _ in range(8)]
        vector[0] = 2.0 if word in POSITIVE else -2.0 if word in NEGATIVE else vector[0]
        lines.append(word + " " + " ".join(f"{v:.4f}" for v in vector))
    path = tmp_path_factory.mktemp("vectors") / "vectors.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


#: The text plugin's dataset fixtures, read in place: textCNN's hub-dataset path uses them.
NLP_FIXTURES = Path(__file__).resolve().parents[2] / "gluon-nlp-core" / "tests" / "fixtures"


@pytest.fixture(scope="session")
def nlp_fixtures() -> Path:
    """The folder of gluon-nlp-core's small dataset files; these tests run in this repository."""
    if not NLP_FIXTURES.is_dir():
        raise FileNotFoundError(f"gluon-nlp-core's test fixtures are not at {NLP_FIXTURES}; "
                                "run the contrib tests from the gluon_hub repository")
    return NLP_FIXTURES


#: TREC coarse classes and the question word that decides each in the toy set.
TREC_WORDS = {"HUM:ind": "who", "NUM:date": "when", "LOC:other": "where"}
TREC_FILLER = "is was the first famous old city river king born built named in of".split()


@pytest.fixture(scope="session")
def trec_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """TREC format (``LABEL:fine question``): 60 training and 15 test questions."""
    root = tmp_path_factory.mktemp("trec")
    rng = random.Random(2)
    labels = sorted(TREC_WORDS)
    paths = []
    for name, count in (("train_5500.label", 60), ("TREC_10.label", 15)):
        lines = []
        for i in range(count):
            label = labels[i % len(labels)]
            words = [rng.choice(TREC_FILLER) for _ in range(rng.randint(3, 7))]
            lines.append(f"{label} {TREC_WORDS[label].capitalize()} {' '.join(words)} ?")
        (root / name).write_text("\n".join(lines) + "\n", encoding="latin-1")
        paths.append(root / name)
    return paths[0], paths[1]


@pytest.fixture(scope="session")
def trec_vectors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """8-d GloVe-format vectors of the toy TREC words (no header line)."""
    rng = random.Random(3)
    lines = [w + " " + " ".join(f"{rng.uniform(-1, 1):.4f}" for _ in range(8))
             for w in list(TREC_WORDS.values()) + TREC_FILLER]
    path = tmp_path_factory.mktemp("trec_vectors") / "glove.txt"
    path.write_text("\n".join(lines) + "\n")
    return path
