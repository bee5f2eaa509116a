"""The list-like dataset every parser returns, and where a dataset's files come from."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from gluon_hub import FileRef


def check_segment(name: str, segment: str, segments: Sequence[str]) -> None:
    """Refuse a ``segment`` dataset ``name`` does not have, naming the ones it has."""
    if segment not in segments:
        raise ValueError(f"{name} has no segment {segment!r}; segments: {', '.join(segments)}")


class TextDataset:
    """Samples in a list, indexable and picklable, so ``mxnet.gluon.data.DataLoader`` takes it.

    ``transform`` and ``transform_first`` work as on Gluon datasets: lazily (applied on
    each access) by default, or eagerly with ``lazy=False``.
    """

    def __init__(self, samples: Sequence[Any]) -> None:
        self._samples = samples

    def __len__(self) -> int:
        return len(self._samples)

    def __getitem__(self, idx: Any) -> Any:
        return self._samples[idx]

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} samples)"

    def transform(self, fn: Callable[..., Any], lazy: bool = True) -> "TextDataset":
        """A dataset of ``fn(sample)``; tuple samples are unpacked as arguments, as in Gluon."""
        mapped = _Mapped(self, fn)
        return mapped if lazy else TextDataset([mapped[i] for i in range(len(mapped))])

    def transform_first(self, fn: Callable[[Any], Any], lazy: bool = True) -> "TextDataset":
        """A dataset where ``fn`` is applied to the first field of each sample only."""
        return self.transform(_First(fn), lazy)


class _Mapped(TextDataset):
    def __init__(self, base: TextDataset, fn: Callable[..., Any]) -> None:
        super().__init__(base)  # type: ignore[arg-type]
        self._fn = fn

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return [self[i] for i in range(*idx.indices(len(self)))]
        sample = self._samples[idx]
        if isinstance(sample, tuple):
            return self._fn(*sample)
        return self._fn(sample)


class _First:
    """Picklable ``lambda first, *rest: (fn(first), *rest)``."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    def __call__(self, first: Any, *rest: Any) -> Any:
        return (self.fn(first), *rest) if rest else self.fn(first)


def dataset_file(ref: FileRef, root: str | os.PathLike[str] | None, names: Sequence[str]) -> Path:
    """The path of one dataset file: from ``root`` when given, else through the hub's cache.

    A directory given as ``root`` holds the user's own copy under one of ``names`` (the
    names the files have once unpacked); it is read as is, without a hash check, so that
    a re-exported or trimmed copy works too.
    """
    if root is not None:
        folder = Path(root).expanduser()
        for name in names:
            if (folder / name).is_file():
                return folder / name
        raise FileNotFoundError(
            f"{folder} holds none of {', '.join(names)}; put the dataset's files there "
            "or leave root unset to download them through the cache"
        )
    from gluon_hub.data.files import dataset_file as hub_dataset_file

    return Path(hub_dataset_file(ref, None))


def read_text(path: Path) -> str:
    """A dataset text file, decoded as UTF-8 (a leading byte-order mark is dropped)."""
    with open(path, encoding="utf-8-sig") as f:
        return f.read()
