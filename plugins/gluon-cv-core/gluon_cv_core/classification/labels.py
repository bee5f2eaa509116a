"""Class names of the datasets the published weights were trained on, in output order.

``InputSpec.labels`` points here (``"gluon_cv_core.classification.labels:IMAGENET1K_LABELS"``); the hub
imports this module only when labels are needed. The ImageNet names are read from
``imagenet1k_classes.tsv`` (WordNet id, short name, full synonym list per line), the
order of GluonCV's ``ImageNet1kAttr`` and of the sorted ILSVRC-2012 synset folders.
"""

from __future__ import annotations

from importlib import resources

__all__ = ["IMAGENET1K_LABELS", "IMAGENET1K_LONG_LABELS", "IMAGENET1K_SYNSETS", "CIFAR10_LABELS"]


def _imagenet_rows() -> list[list[str]]:
    text = resources.files(__package__).joinpath("imagenet1k_classes.tsv").read_text(encoding="utf-8")
    return [line.split("\t") for line in text.splitlines() if line]


_ROWS = _imagenet_rows()

#: WordNet ids (``n01440764`` ...), the folder names of the ILSVRC-2012 images.
IMAGENET1K_SYNSETS: tuple[str, ...] = tuple(row[0] for row in _ROWS)
#: Short names (``"tench"``, ``"goldfish"`` ...).
IMAGENET1K_LABELS: tuple[str, ...] = tuple(row[1] for row in _ROWS)
#: Every synonym of each class (``"tench, Tinca tinca"`` ...).
IMAGENET1K_LONG_LABELS: tuple[str, ...] = tuple(row[2] for row in _ROWS)

CIFAR10_LABELS: tuple[str, ...] = (
    "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck",
)
