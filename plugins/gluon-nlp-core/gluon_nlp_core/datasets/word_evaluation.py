"""Word similarity and word analogy evaluation sets, read as GluonNLP 0.10's
``gluonnlp.data.word_embedding_evaluation`` reads them.

Similarity sets give ``[word1, word2, score]`` samples (``score`` a ``float``, on the scale
between the class's ``min`` and ``max``); analogy sets give ``[a, b, c, d]`` (a is to b as c is
to d). Feed them to :mod:`gluon_nlp_core.text.embedding_evaluation`. Checked sample for sample
against GluonNLP's classes on files in each published layout (``tests/test_datasets_word_evaluation.py``).

Each set's files, hashes and URLs are in ``word_evaluation_datasets.json``. Most come inside an
archive (zip or ``.tar.gz``): through the cache the archive is fetched once (its sha1 checked)
and each file read from it is kept in the cache's ``extracted/<name>/`` after its own published
sha1 is checked. A ``root`` directory may hold the files as GluonNLP unpacks them
(``root/rw/rw.txt``), the files themselves (``root/rw.txt``) or the archive (``root/rw.zip``);
they are read as they are.

Malformed lines raise ``ValueError`` naming the file and line, where GluonNLP would fail later
with an ``IndexError`` or drop rows silently.
"""

from __future__ import annotations

import abc
import os
from pathlib import PurePosixPath
from typing import Any, Iterator, Sequence

from .._data_specs import _groups, dataset_files
from ._archives import published_member
from ._base import TextDataset, check_segment, dataset_file, read_text


def _check_choice(name: str, what: str, value: Any, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ValueError(f"{name} has no {what} {value!r}; choose one of: {', '.join(choices)}")


# ----------------------------------------------------------------------------- files


def _decode(data: bytes, source: str) -> str:
    """UTF-8 text (a leading byte-order mark dropped); bad bytes name the file and line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValueError(f"{source}:{line}: not UTF-8 text ({exc.reason})") from None


def member_text(name: str, key: str, root: str | os.PathLike[str] | None) -> tuple[str, str]:
    """The text of one file of dataset ``name`` (by its ``members`` key) published inside an
    archive, and the name errors give it (its path)."""
    data, source = published_member(name, key, root)
    return _decode(data, source), source


def _plain_text(name: str, root: str | os.PathLike[str] | None) -> tuple[str, str]:
    """The text of a dataset published as one plain file (``files["all"]``)."""
    ref = dataset_files(name)["all"]
    path = dataset_file(ref, root, [PurePosixPath(ref.urls[0]).name])
    return read_text(path), str(path)


# ----------------------------------------------------------------------------- rows


def _rows(text: str, separator: str | None = None) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of each non-blank line, split at whitespace or ``separator``
    after stripping the line, as GluonNLP's ``CorpusDataset`` splits them."""
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if line:
            yield number, line.split(separator)


def _score_row(fields: list[str], columns: tuple[int, int, int], source: str, number: int,
               layout: str) -> list[Any]:
    """``[fields[i], fields[j], float(fields[k])]``, or ValueError naming the file and line."""
    first, second, score = columns
    if len(fields) <= max(columns):
        raise ValueError(f"{source}:{number}: {len(fields)} field(s) {fields[:6]}, expected {layout}")
    try:
        value = float(fields[score])
    except ValueError:
        raise ValueError(f"{source}:{number}: score {fields[score]!r} (field {score + 1}) is not a "
                         f"number; expected {layout}") from None
    return [fields[first], fields[second], value]


# ----------------------------------------------------------------------------- similarity


class WordSimilarityDataset(TextDataset, abc.ABC):
    """A word similarity or relatedness set: ``[word1, word2, score]`` samples, ``score`` a
    float between the class's ``min`` and ``max``."""

    name = ""
    segments: tuple[str, ...] = ("all",)
    min: float = 0
    max: float = 10

    def __init__(self, segment: str, root: str | os.PathLike[str] | None) -> None:
        check_segment(self.name, segment, self.segments)
        self.segment = segment
        super().__init__(self._read(root))

    @abc.abstractmethod
    def _read(self, root: str | os.PathLike[str] | None) -> list[list[Any]]:
        """The samples, from ``root`` or the cache."""

    def _columns(self, key: str, root: str | os.PathLike[str] | None, columns: tuple[int, int, int],
                 layout: str, skip_header: bool = False) -> list[list[Any]]:
        """The rows of one archive member, three columns each."""
        text, source = member_text(self.name, key, root)
        rows = list(_rows(text))[1 if skip_header else 0:]
        return [_score_row(fields, columns, source, number, layout) for number, fields in rows]


class WordSim353(WordSimilarityDataset):
    """WordSim-353 with Agirre et al.'s split: ``segment`` is ``"similarity"``,
    ``"relatedness"`` or ``"all"`` (both, without duplicates, sorted as GluonNLP gives them).
    Scores from 0 (unrelated) to 10."""

    name = "wordsim353"
    segments = ("all", "similarity", "relatedness")

    def __init__(self, segment: str = "all", root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(segment, root)

    def _read(self, root: str | os.PathLike[str] | None) -> list[list[Any]]:
        keys = ("relatedness", "similarity") if self.segment == "all" else (self.segment,)
        unique: set[tuple[str, ...]] = set()
        for key in keys:
            text, source = member_text(self.name, key, root)
            for number, fields in _rows(text):
                _score_row(fields, (0, 1, 2), source, number, "word1 word2 score")
                unique.add(tuple(fields))
        # GluonNLP sorts the distinct rows as strings and only then reads the scores.
        return [[row[0], row[1], float(row[2])] for row in sorted(unique)]


class MEN(WordSimilarityDataset):
    """MEN: pairs of lemmas, their part-of-speech suffix (``-n``, ``-v``, ``-j``) dropped;
    ``segment`` ``"full"``, ``"dev"`` or ``"test"``. Scores from 0 to 50."""

    name = "men"
    segments = ("full", "dev", "test")
    max = 50

    def __init__(self, segment: str = "dev", root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(segment, root)

    def _read(self, root: str | os.PathLike[str] | None) -> list[list[Any]]:
        rows = self._columns(self.segment, root, (0, 1, 2), "word1-pos word2-pos score")
        return [[first[:-2], second[:-2], score] for first, second, score in rows]


class RadinskyMTurk(WordSimilarityDataset):
    """Radinsky et al.'s Mechanical Turk set, a comma-separated file. Scores from 1 to 5."""

    name = "radinsky_mturk"
    min, max = 1, 5

    def __init__(self, segment: str = "all", root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(segment, root)

    def _read(self, root: str | os.PathLike[str] | None) -> list[list[Any]]:
        text, source = _plain_text(self.name, root)
        return [_score_row(fields, (0, 1, 2), source, number, "word1,word2,score")
                for number, fields in _rows(text, ",")]


class RareWords(WordSimilarityDataset):
    """Stanford Rare Words: the first three columns of ``rw.txt``. Scores from 0 to 10."""

    name = "rare_words"

    def __init__(self, segment: str = "all", root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(segment, root)

    def _read(self, root: str | os.PathLike[str] | None) -> list[list[Any]]:
        return self._columns("all", root, (0, 1, 2), "word1 word2 score ...")


class SimLex999(WordSimilarityDataset):
    """SimLex-999: the ``SimLex999`` column (the fourth) after the header. Scores 0 to 10."""

    name = "simlex999"

    def __init__(self, segment: str = "all", root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(segment, root)

    def _read(self, root: str | os.PathLike[str] | None) -> list[list[Any]]:
        return self._columns("all", root, (0, 1, 3), "word1 word2 POS SimLex999 ...", skip_header=True)


class SimVerb3500(WordSimilarityDataset):
    """SimVerb-3500: ``segment`` ``"full"`` (3500 pairs), ``"dev"`` (500) or ``"test"``
    (3000); the score is the fourth column. Scores from 0 to 10."""

    name = "simverb3500"
    segments = ("full", "dev", "test")

    def __init__(self, segment: str = "full", root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(segment, root)

    def _read(self, root: str | os.PathLike[str] | None) -> list[list[Any]]:
        return self._columns(self.segment, root, (0, 1, 3), "verb1 verb2 POS score ...")


class SemEval17Task2(WordSimilarityDataset):
    """SemEval-2017 Task 2, monolingual subtask: ``segment`` ``"trial"`` or ``"test"``,
    ``language`` ``"en"``, ``"de"``, ``"es"``, ``"it"`` or ``"fa"``. Pairs come from the data
    file, scores from the gold key file, line by line.

    As in GluonNLP, lines are split at whitespace, so a multi-word term contributes only its
    first two words.
    """

    name = "semeval17_task2"
    segments = ("trial", "test")
    languages = ("en", "es", "de", "it", "fa")
    max = 5

    def __init__(self, segment: str = "trial", language: str = "en",
                 root: str | os.PathLike[str] | None = None) -> None:
        _check_choice(self.name, "language", language, self.languages)
        self.language = language
        super().__init__(segment, root)

    def _read(self, root: str | os.PathLike[str] | None) -> list[list[Any]]:
        prefix = f"{self.segment}/{self.language}"
        data, data_source = member_text(self.name, f"{prefix}/data", root)
        keys, key_source = member_text(self.name, f"{prefix}/keys", root)
        pairs, scores = list(_rows(data)), list(_rows(keys))
        if len(pairs) != len(scores):
            raise ValueError(f"{key_source}:{(scores[-1][0] + 1) if scores else 1}: {len(scores)} "
                             f"score line(s) for the {len(pairs)} pair line(s) of {data_source}")
        samples: list[list[Any]] = []
        for (data_number, words), (number, score) in zip(pairs, scores):
            if len(words) < 2:
                raise ValueError(f"{data_source}:{data_number}: {words}, expected two words")
            try:
                samples.append([words[0], words[1], float(score[0])])
            except ValueError:
                raise ValueError(f"{key_source}:{number}: score {score[0]!r} is not a number") from None
        return samples


class BakerVerb143(WordSimilarityDataset):
    """Baker et al.'s verb pairs: the mean of 10 annotators (the 13th column). Scores 0 to 1."""

    name = "baker_verb143"
    max = 1

    def __init__(self, segment: str = "all", root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(segment, root)

    def _read(self, root: str | os.PathLike[str] | None) -> list[list[Any]]:
        return self._columns("all", root, (0, 1, 12), "verb1 verb2 and 11 score columns")


class YangPowersVerb130(WordSimilarityDataset):
    """Yang and Powers' 130 verb pairs, scores 0 to 4. The pairs ship with this package, so
    nothing is downloaded; ``root`` is accepted for the common signature and not read."""

    name = "yang_powers_verb130"
    max = 4

    def __init__(self, segment: str = "all", root: str | os.PathLike[str] | None = None) -> None:
        super().__init__(segment, root)

    def _read(self, root: str | os.PathLike[str] | None) -> list[list[Any]]:
        return [[first, second, float(score)] for first, second, score in _groups()[self.name]["pairs"]]


# ----------------------------------------------------------------------------- analogy


class GoogleAnalogyTestSet(TextDataset):
    """The Google analogy test set: ``[a, b, c, d]`` samples.

    ``group`` ``"semantic"`` or ``"syntactic"`` (the ``gram*`` categories) and ``category``
    (``"capital-world"``, ``"gram8-plural"`` ...) select subsets; ``None`` keeps all.
    ``lowercase`` lower-cases the words, as GluonNLP does by default.
    """

    name = "google_analogy"
    groups = ("syntactic", "semantic")
    segments = ("all",)

    def __init__(self, group: str | None = None, category: str | None = None, lowercase: bool = True,
                 root: str | os.PathLike[str] | None = None, segment: str = "all") -> None:
        check_segment(self.name, segment, self.segments)
        if group is not None:
            _check_choice(self.name, "group", group, self.groups)
        if category is not None:
            _check_choice(self.name, "category", category, self.categories())
        self.segment, self.group, self.category, self.lowercase = segment, group, category, lowercase
        text, source = _plain_text(self.name, root)
        super().__init__(list(self._parse(text, source)))

    @classmethod
    def categories(cls) -> list[str]:
        """The 14 categories, in the file's order."""
        return list(_groups()[cls.name]["categories"])

    def _parse(self, text: str, source: str) -> Iterator[list[str]]:
        category = None
        for number, line in enumerate(text.splitlines(), 1):
            if line.startswith(":"):
                header = line.split()
                if len(header) < 2:
                    raise ValueError(f"{source}:{number}: a ': category' header without a name")
                category = header[1]
                continue
            words = (line.lower() if self.lowercase else line).split()
            if not words:
                continue
            if category is None:
                raise ValueError(f"{source}:{number}: an analogy before the first ': category' header")
            if len(words) != 4:
                raise ValueError(f"{source}:{number}: {len(words)} word(s) {words[:6]}, expected "
                                 "four (a b c d)")
            group = "syntactic" if "gram" in category else "semantic"
            if self.group in (None, group) and self.category in (None, category):
                yield words


class BiggerAnalogyTestSet(TextDataset):
    """The Bigger Analogy Test Set (BATS 3.0).

    Each category file lists ``word answer[/alternative...]`` pairs. With
    ``form_analogy_pairs`` (default) samples are ``[a, b, c, d]`` for every two different pairs
    of a category; otherwise the pairs themselves, the answer a list of alternatives unless
    ``drop_alternative_solutions`` (default) keeps only the first. ``category`` (``"I01"`` ...
    ``"L10"``) selects one category; ``None`` reads all 40 in sorted order.
    """

    name = "bigger_analogy"
    segments = ("all",)

    def __init__(self, category: str | None = None, form_analogy_pairs: bool = True,
                 drop_alternative_solutions: bool = True, root: str | os.PathLike[str] | None = None,
                 segment: str = "all") -> None:
        check_segment(self.name, segment, self.segments)
        if category is not None:
            _check_choice(self.name, "category", category, self.categories())
        self.segment, self.category = segment, category
        self.form_analogy_pairs = form_analogy_pairs
        self.drop_alternative_solutions = drop_alternative_solutions
        samples: list[list[Any]] = []
        for code in [category] if category is not None else self.categories():
            samples += self._category(code, root)
        super().__init__(samples)

    @classmethod
    def categories(cls) -> list[str]:
        """The 40 category codes, sorted (``"D01"`` ... ``"L10"``)."""
        return sorted(_groups()[cls.name]["members"])

    def _category(self, code: str, root: str | os.PathLike[str] | None) -> list[list[Any]]:
        text, source = member_text(self.name, code, root)
        pairs: list[list[Any]] = []
        for number, fields in _rows(text):
            if len(fields) < 2:
                raise ValueError(f"{source}:{number}: {fields}, expected a word and its answer(s)")
            answers = fields[1].split("/")
            pairs.append([fields[0], answers[0] if self.drop_alternative_solutions else answers])
        if not self.form_analogy_pairs:
            return pairs
        return [[a[0], a[1], b[0], b[1]] for a in pairs for b in pairs if a != b]
