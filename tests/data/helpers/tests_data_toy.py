"""A toy dataset plugin, registered by the tests the way a third party would register one."""

from __future__ import annotations

import hashlib

from gluon_hub import DatasetSpec, FileRef, hookimpl
from gluon_hub.compat import mx
from gluon_hub.data import dataset_file

GLUON_HUB_API = ">=1,<2"

#: The contents each segment's file must have; tests write them into a folder or serve them.
CONTENTS = {"train": b"3 1 4\n1 5\n9 2 6 5\n", "test": b"2 7\n"}
FILES = {
    segment: FileRef(hash="sha256:" + hashlib.sha256(data).hexdigest(), size=len(data),
                     filename=f"toy/{segment}.txt")
    for segment, data in CONTENTS.items()
}


def toy(segment: str = "train", root: str | None = None) -> mx.gluon.data.SimpleDataset:
    """Each line of the segment's file as a list of ints."""
    text = dataset_file(FILES[segment], root=root).read_text()
    return mx.gluon.data.SimpleDataset([[int(t) for t in line.split()] for line in text.splitlines()])


@hookimpl
def gluon_hub_datasets():
    return [DatasetSpec(name="toy", factory="tests_data_toy:toy", task="demo", segments=tuple(FILES),
                        files=tuple(FILES.values()))]
