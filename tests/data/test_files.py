"""Dataset files: from a folder the user has (verified), or through the cache."""

from __future__ import annotations

import hashlib
import http.server
import threading
import zipfile
from pathlib import Path
from typing import Any, Iterator

import pytest

import gluon_hub
from gluon_hub import FileRef
from gluon_hub.data import DatasetFileError, dataset_file

DATA = b"the quick brown fox\n"
REF = FileRef(hash="sha256:" + hashlib.sha256(DATA).hexdigest(), size=len(DATA), filename="corpus/train.txt")


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache and config, so that the user's settings never leak in."""
    for var in ("GLUON_HUB_OFFLINE", "GLUON_HUB_MIRRORS", "GLUON_HUB_SHARED_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GLUON_HUB_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("GLUON_HUB_CONFIG", str(tmp_path / "no-config.json"))
    return tmp_path / "cache"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 serving ``tmp_path / 'served'``."""
    folder = tmp_path / "served"
    folder.mkdir()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_a_file_in_root_is_found_and_verified(tmp_path: Path) -> None:
    (tmp_path / "train.txt").write_bytes(DATA)
    assert dataset_file(REF, root=tmp_path) == tmp_path / "train.txt"
    by_url = FileRef(hash=REF.hash, urls=("https://example.org/x/train.txt?download=1",))
    assert dataset_file(by_url, root=str(tmp_path)).read_bytes() == DATA


@pytest.mark.parametrize(
    "content, words",
    [(None, "train.txt is not in"), (DATA.upper(), "has hash sha256:"), (DATA + b"!", "bytes, expected")],
)
def test_a_missing_or_wrong_file_in_root_is_refused(tmp_path: Path, content: bytes | None,
                                                    words: str) -> None:
    if content is not None:
        (tmp_path / "train.txt").write_bytes(content)
    with pytest.raises(DatasetFileError, match=words) as info:
        dataset_file(REF, root=tmp_path)
    assert isinstance(info.value, FileNotFoundError) and "root=None" in str(info.value)


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(DatasetFileError, match="not a directory"):
        dataset_file(REF, root=tmp_path / "nowhere")


def test_an_archive_in_root_is_extracted_through_the_cache(tmp_path: Path, isolated_cache: Path) -> None:
    with zipfile.ZipFile(tmp_path / "corpus.zip", "w") as archive:
        archive.writestr("corpus/train.txt", DATA)
    ref = FileRef(hash=REF.hash, filename="corpus.zip", extract="corpus/train.txt",
                  archive_hash="sha256:" + hashlib.sha256((tmp_path / "corpus.zip").read_bytes()).hexdigest())
    path = dataset_file(ref, root=tmp_path)
    assert path.read_bytes() == DATA and isolated_cache in path.parents
    (tmp_path / "train.txt").write_bytes(DATA)  # the extracted member itself is used as is
    assert dataset_file(ref, root=tmp_path) == tmp_path / "train.txt"


def test_without_root_the_file_comes_through_the_cache(server: str, tmp_path: Path) -> None:
    (tmp_path / "served" / "train.txt").write_bytes(DATA)
    ref = FileRef(hash=REF.hash, size=REF.size, urls=(f"{server}/train.txt",))
    path = dataset_file(ref, progress=False)
    assert path.read_bytes() == DATA
    (tmp_path / "served" / "train.txt").unlink()
    assert dataset_file(ref) == path  # cached: the server is no longer needed


def test_offline_and_absent_says_how_to_prefetch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GLUON_HUB_OFFLINE", "1")
    with pytest.raises(FileNotFoundError, match=r"run: python -c 'import gluon_hub; gluon_hub\.fetch\("):
        dataset_file(REF)  # a file no registered dataset lists: the command fetches the file itself


def test_a_plugin_dataset_loads_by_name_from_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent / "helpers"))
    import tests_data_toy

    for segment, data in tests_data_toy.CONTENTS.items():
        (tmp_path / f"{segment}.txt").write_bytes(data)
    gluon_hub.reset_hub()
    try:
        gluon_hub.register_plugin(tests_data_toy, name="toyplugin")
        assert "toy" in gluon_hub.list_datasets(plugin="toyplugin")
        train = gluon_hub.load_dataset("toy", segment="train", root=str(tmp_path))
        assert [train[i] for i in range(len(train))] == [[3, 1, 4], [1, 5], [9, 2, 6, 5]]
        with pytest.raises(ValueError, match="no segment 'dev'"):
            gluon_hub.load_dataset("toy", segment="dev", root=str(tmp_path))
    finally:
        gluon_hub.reset_hub()
