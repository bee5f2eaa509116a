"""One place computes file hashes: every other module asks gluon_hub._cache._hashing."""

from __future__ import annotations

import ast
import io
import os
from pathlib import Path

import gluon_hub
from gluon_hub._cache import _hashing

from cachetestlib import sha256

PACKAGE = Path(gluon_hub.__file__).parent


def _imports_hashlib(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name == "hashlib" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "hashlib":
            return True
    return False


def test_no_module_but_the_hashing_one_imports_hashlib():
    users = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if _imports_hashlib(p))
    assert users == [str(Path("_cache", "_hashing.py"))]


def test_the_hashing_helpers_agree(tmp_path):
    data = os.urandom(3 << 20)  # several chunks
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    assert _hashing.hash_file(path, "sha256") == sha256(data) == _hashing.hash_bytes(data)
    hashes, size = _hashing.hash_stream(io.BytesIO(data), ["sha256", "sha1", "sha256"])
    assert size == len(data) and hashes["sha256"] == sha256(data)
    assert _hashing.hash_file_sized(path, ["sha1"]) == ({"sha1": hashes["sha1"]}, len(data))
