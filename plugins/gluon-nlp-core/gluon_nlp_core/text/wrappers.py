"""SentencePiece, Moses and jieba tokenizers: thin wrappers giving GluonNLP 0.10's output.

Each library is imported when a tokenizer is made, not with this module, and a missing
one is an ``ImportError`` that names the ``pip install`` to run. The tests compare every
wrapper with GluonNLP's on generated text (a SentencePiece model is trained for them).

One deliberate difference: with ``num_best`` 0 or 1, GluonNLP 0.10's
``SentencepieceTokenizer`` asks sentencepiece for a sample of size 0 or 1, which
sentencepiece releases since 0.1.98 refuse; here that case is the plain (best)
segmentation, the "no sampling" GluonNLP documents for it.
"""

from __future__ import annotations

import os
import warnings
from importlib import import_module
from typing import Any, Sequence

__all__ = [
    "JiebaTokenizer",
    "SacreMosesDetokenizer",
    "SacreMosesTokenizer",
    "SentencepieceDetokenizer",
    "SentencepieceTokenizer",
]


def _require(module: str, package: str, user: str) -> Any:
    """Import ``module`` or say which package ``user`` needs."""
    try:
        with warnings.catch_warnings():  # jieba imports deprecated stdlib modules
            warnings.simplefilter("ignore")
            return import_module(module)
    except ImportError as err:
        raise ImportError(
            f"{user} needs the {package!r} package, which is not installed: "
            f"pip install {package} (the plugin's [tokenizers] extra installs all four tokenizer "
            "libraries: pip install regex sentencepiece sacremoses jieba)"
        ) from err


class _SentencepieceModel:
    """A loaded SentencePiece model file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        spm = _require("sentencepiece", "sentencepiece", type(self).__name__)
        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"no SentencePiece model at {self.path!r}")
        self._processor = spm.SentencePieceProcessor()
        try:
            self._processor.Load(self.path)
        except (OSError, RuntimeError) as err:
            raise ValueError(f"{self.path!r} is not a SentencePiece model: {err}") from None

    def __len__(self) -> int:
        return len(self._processor)

    @property
    def tokens(self) -> list[str]:
        """Every piece of the model, in id order."""
        return [self._processor.IdToPiece(i) for i in range(len(self))]


class SentencepieceTokenizer(_SentencepieceModel):
    """Text to SentencePiece pieces (BPE or unigram model), as GluonNLP 0.10's.

    Parameters
    ----------
    path : the ``.model`` file (GluonNLP's ``.spiece`` / ``.bpe`` files are such models).
    num_best : 0 or 1 for the best segmentation; above 1, sample among that many best;
        below 0, sample from all (unigram models; a BPE model samples by BPE-dropout).
    alpha : the sampling smoothing (inverse temperature), or BPE-dropout's probability.
    """

    def __init__(self, path: str | os.PathLike[str], num_best: int = 0,
                 alpha: float = 1.0) -> None:
        super().__init__(path)
        self.num_best = int(num_best)
        self.alpha = float(alpha)

    def __call__(self, text: str) -> list[str]:
        if self.num_best in (0, 1):
            return self._processor.EncodeAsPieces(text)
        return self._processor.SampleEncodeAsPieces(text, self.num_best, self.alpha)

    def __repr__(self) -> str:
        return (f"SentencepieceTokenizer({self.path!r}, num_best={self.num_best}, "
                f"alpha={self.alpha})")


class SentencepieceDetokenizer(_SentencepieceModel):
    """SentencePiece pieces back to text, as GluonNLP 0.10's.

    Parameters
    ----------
    path : the model file the pieces came from.
    """

    def __call__(self, pieces: Sequence[str]) -> str:
        return self._processor.DecodePieces(list(pieces))

    def __repr__(self) -> str:
        return f"SentencepieceDetokenizer({self.path!r})"


class SacreMosesTokenizer:
    """The Moses tokenizer (sacremoses), with GluonNLP 0.10's defaults.

    Parameters
    ----------
    lang : language code for the tokenizer's rules (GluonNLP always uses ``"en"``).

    Notes
    -----
    As in GluonNLP, sacremoses' defaults apply: XML-special characters come out escaped
    (``&`` as ``&amp;``). sacremoses is LGPL-2.1+ licensed.
    """

    def __init__(self, lang: str = "en") -> None:
        moses = _require("sacremoses", "sacremoses", "SacreMosesTokenizer")
        self.lang = lang
        self._tokenizer = moses.MosesTokenizer(lang=lang)

    def __call__(self, text: str, return_str: bool = False) -> list[str] | str:
        return self._tokenizer.tokenize(text, return_str=return_str)

    def __repr__(self) -> str:
        return f"SacreMosesTokenizer(lang={self.lang!r})"


class SacreMosesDetokenizer:
    """The Moses detokenizer (sacremoses), with GluonNLP 0.10's defaults.

    Parameters
    ----------
    return_str : give one string (default) rather than a list of words.
    lang : language code for the detokenizer's rules.
    """

    def __init__(self, return_str: bool = True, lang: str = "en") -> None:
        moses = _require("sacremoses", "sacremoses", "SacreMosesDetokenizer")
        self.return_str = return_str
        self.lang = lang
        self._detokenizer = moses.MosesDetokenizer(lang=lang)

    def __call__(self, tokens: Sequence[str], return_str: bool | None = None) -> str | list[str]:
        as_str = self.return_str if return_str is None else return_str
        return self._detokenizer.detokenize(list(tokens), return_str=as_str)

    def __repr__(self) -> str:
        return f"SacreMosesDetokenizer(return_str={self.return_str}, lang={self.lang!r})"


class JiebaTokenizer:
    """Chinese word segmentation with jieba's default (accurate) mode, as GluonNLP 0.10's.

    Spaces and empty strings jieba yields are dropped. Words added with
    ``jieba.add_word`` apply here too, since this uses jieba's default segmenter.
    """

    def __init__(self) -> None:
        self._jieba = _require("jieba", "jieba", "JiebaTokenizer")

    def __call__(self, text: str) -> list[str]:
        return [word for word in self._jieba.cut(text) if word not in (" ", "")]

    def __repr__(self) -> str:
        return "JiebaTokenizer()"
