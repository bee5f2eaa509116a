"""Dataset archives: extracting a ``.tar`` / ``.zip`` once, and the cache's extracted folder of a
registered dataset's archives.
"""

from __future__ import annotations

import os
import tarfile
import zipfile
from pathlib import Path
from typing import Iterable

__all__ = ["extracted_archive"]


def extracted_archive(archive: str | os.PathLike[str], into: str | os.PathLike[str]) -> Path:
    """``into``, holding the members of a ``.tar`` / ``.tar.gz`` / ``.zip``, extracted once.

    Several archives may share ``into`` (VOC's trainval and test tars both fill
    ``VOCdevkit/VOC2007``). A marker written after the last member says an archive is
    complete, so an interrupted extraction is redone instead of trusted.
    """
    archive, target = Path(archive), Path(into)
    marker = target / f".{archive.name}.complete"
    if marker.is_file():
        return target
    target.mkdir(parents=True, exist_ok=True)
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as bundle:
            bundle.extractall(target)
    elif tarfile.is_tarfile(archive):
        with tarfile.open(archive) as bundle:
            if hasattr(tarfile, "data_filter"):  # refuses absolute paths and links out of the target
                bundle.extractall(target, filter="data")
            else:  # Python < 3.10.12 / 3.11.4
                bundle.extractall(target)
    else:
        raise ValueError(f"{archive} is neither a tar nor a zip archive")
    marker.touch()
    return target


def _fetched(dataset: str, wanted: Iterable[int], cache_root: str | os.PathLike[str] | None) -> Path:
    """One folder holding the extracted archives (by index in the spec) of a registered dataset.

    It is the cache's ``extracted/<dataset>``: ``gluon-hub cache ls`` shows it and ``cache
    purge`` removes it; hash verification covers the archives, not this folder.
    """
    from gluon_hub.cache import extracted_dir
    from gluon_hub.data.files import dataset_file

    from .specs import dataset_specs

    files = next(spec.files for spec in dataset_specs() if spec.name == dataset)
    target = extracted_dir(dataset, cache_root)
    for i in wanted:
        extracted_archive(dataset_file(files[i], cache_root=cache_root), target)
    return target
