"""Language-modelling corpora: text8, enwik8 (Mahoney's Wikipedia prefixes) and the One
Billion Word benchmark (GBW), read as GluonNLP 0.10's ``Text8``, ``Enwik8`` and ``GBWStream``."""

from __future__ import annotations

import fnmatch
import hashlib
import os
import random
import shutil
import tarfile
from pathlib import Path, PurePosixPath
from typing import Any, Iterator

from .._data_specs import _groups, dataset_files
from ..text.vocab import Vocab
from ._base import TextDataset, check_segment, dataset_file, read_text
from .language_model import parse_corpus


class Text8(TextDataset):
    """text8: lower-case Wikipedia words on one line, cut into samples (token lists) of at
    most ``max_sentence_length`` words (``None`` or 0: the whole line).

    ``root`` may hold the unpacked ``text8`` file or ``text8-6c70299b.zip``.
    """

    segments = ("train",)

    def __init__(
        self,
        segment: str = "train",
        max_sentence_length: int | None = 10000,
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        check_segment("text8", segment, self.segments)
        self.segment = segment
        path = dataset_file(dataset_files("text8")[segment], root, ["text8"])
        lines = parse_corpus(read_text(path), flatten=False, skip_empty=True, bos=None, eos=None)
        if max_sentence_length:
            step = max_sentence_length
            lines = [line[i : i + step] for line in lines for i in range(0, len(line), step)]
        super().__init__(lines)


class Enwik8(TextDataset):
    """enwik8 as split by awd-lstm-lm's ``prep_enwik8.py``: one sample per line, the line's
    byte codes as tokens (``"trainraw"`` ... : the text lines themselves, split at spaces).

    ``segment`` is ``"train"``, ``"val"``, ``"test"``, ``"trainraw"``, ``"valraw"`` or
    ``"testraw"``; ``root`` may hold ``train.txt``, ``valid.txt.raw`` ... or the zip.
    """

    segments = ("train", "val", "test", "trainraw", "valraw", "testraw")

    def __init__(self, segment: str = "train", root: str | os.PathLike[str] | None = None) -> None:
        check_segment("enwik8", segment, self.segments)
        self.segment = segment
        ref = dataset_files("enwik8")[segment]
        path = dataset_file(ref, root, [ref.extract or ""])
        super().__init__(parse_corpus(read_text(path), flatten=False, skip_empty=True, bos=None, eos=None))


class GBW:
    """The One Billion Word benchmark, one shard at a time: iterating gives a
    :class:`TextDataset` of token lists (``eos`` ending each sentence) per shard.

    ``segment="train"`` has 99 shards, taken in a random order (``seed``) as GluonNLP
    does; ``"test"`` the one held-out shard. ``root`` may hold the shards
    (``news.en-00001-of-00100`` ...) or GluonNLP's unpacked layout; they are read as they
    are. Through the cache, the archive is fetched and unpacked once, the shards' published
    sha1 checked.
    """

    segments = ("train", "test")

    def __init__(
        self,
        segment: str = "train",
        skip_empty: bool = True,
        bos: str | None = None,
        eos: str | None = "<eos>",
        root: str | os.PathLike[str] | None = None,
        seed: int | None = None,
    ) -> None:
        check_segment("gbw", segment, self.segments)
        self.segment, self._skip_empty, self._bos, self._eos = segment, skip_empty, bos, eos
        self._root, self._seed = root, seed
        self.shards = _gbw_shards(segment, root)

    def __len__(self) -> int:
        return len(self.shards)

    def __iter__(self) -> Iterator[TextDataset]:
        order = list(self.shards)
        if self.segment == "train":
            random.Random(self._seed).shuffle(order)
        for path in order:
            yield TextDataset(parse_corpus(read_text(path), False, self._skip_empty, self._bos, self._eos))

    @property
    def vocab(self) -> Vocab:
        """GluonNLP's published GBW vocabulary (793,471 words)."""
        ref = dataset_files("gbw")["vocab"]
        return Vocab.from_json(read_text(dataset_file(ref, self._root, [ref.extract or ""])))


def _gbw_shards(segment: str, root: str | os.PathLike[str] | None) -> list[Path]:
    member: dict[str, Any] = _groups()["gbw"]["members"][segment]
    pattern, sha1 = member["pattern"], member["sha1"]
    if root is not None:
        folder = Path(root).expanduser()
        for candidate in (folder, folder / member["dir"],
                          folder / "1-billion-word-language-modeling-benchmark-r13output" / member["dir"]):
            found = sorted(p for p in candidate.glob("*") if fnmatch.fnmatch(p.name, pattern))
            if found:
                return found
        raise FileNotFoundError(
            f"{folder} holds no {pattern} shards (nor a {member['dir']} folder of them); unpack "
            "the benchmark's .tar.gz there, or leave root unset to download it through the cache"
        )
    from gluon_hub import cache

    dest = cache.extracted_dir("gbw") / member["dir"]
    found = sorted(p for p in dest.glob("*") if fnmatch.fnmatch(p.name, pattern))
    if found:
        return found
    archive = dataset_file(dataset_files("gbw")["archive"], None, [])
    return _unpack(archive, member["dir"], pattern, sha1, cache.extracted_dir("gbw"))


def _unpack(archive: Path, subdir: str, pattern: str, sha1: str, dest: Path) -> list[Path]:
    """Write the shards matching ``pattern`` under ``subdir`` of the tar to ``dest/subdir``,
    after checking their sha1 (of all shards in name order, as GluonNLP hashes them)."""
    target = dest / subdir
    staging = dest / f".{subdir}.{os.getpid()}.part"
    staging.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "r:*") as tar:
        for info in tar:
            path = PurePosixPath(info.name)
            if info.isfile() and path.parent.name == subdir and fnmatch.fnmatch(path.name, pattern):
                reader = tar.extractfile(info)
                if reader is not None:
                    (staging / path.name).write_bytes(reader.read())
    shards = sorted(staging.iterdir())
    if not shards:
        raise FileNotFoundError(f"{archive} holds no {subdir}/{pattern} files")
    digest = hashlib.sha1()
    for shard in shards:
        digest.update(shard.read_bytes())
    if digest.hexdigest() != sha1:
        shutil.rmtree(staging)
        raise ValueError(
            f"{archive}: the {subdir}/{pattern} shards hash to {digest.hexdigest()}, the "
            f"published sha1 is {sha1}; delete the archive from the cache and fetch it again"
        )
    shutil.rmtree(target, ignore_errors=True)
    os.replace(staging, target)
    return sorted(target.iterdir())
