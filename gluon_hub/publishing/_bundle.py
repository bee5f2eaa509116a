"""Bundles: a tar of weight files plus a manifest, to carry weights to a machine off the network.

Layout of a bundle (an uncompressed tar, or gzip-compressed when named ``.tar.gz``)::

    manifest.json        schema, one entry per file, and the sha256 of the manifest itself
    weights/<name>       each file, as the cache delivers it (verified against its FileRef)

Import trusts nothing in the archive: it refuses links, directories, absolute paths,
``..`` and any member the manifest does not declare, checks every size, and hashes every
file before the first one enters the cache, so a damaged bundle leaves the cache as it
was. The manifest's own hash catches a damaged manifest; it is not a signature, so a
bundle is only as trustworthy as whoever handed it over.
"""

from __future__ import annotations

import io
import json
import os
import re
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal, Sequence

from .._cache._hashing import hash_bytes, hash_file_sized, hash_stream
from .._version import __version__
from ..specs import FileRef, WeightVariant, _check_hash, _from_jsonable, _to_jsonable
from ._weights_index import weights_from_index
from .errors import BundleError

SCHEMA = "gluon-hub-bundle/1"
MANIFEST = "manifest.json"
FILES_DIR = "weights"
MAX_MANIFEST_BYTES = 16 << 20
_CHUNK = 1 << 20
_MEMBER_RE = re.compile(rf"^{FILES_DIR}/[A-Za-z0-9_\-][A-Za-z0-9_.\-]*$")


@dataclass(frozen=True)
class BundleFile:
    """One file of a bundle: its member path, the FileRef it fills, and who uses it."""

    path: str
    sha256: str
    size: int
    ref: FileRef
    models: tuple[str, ...]  # "model:tag" labels, or "embedding NAME" / "dataset NAME"


# -- writing ---------------------------------------------------------------------------


def parse_target(text: str) -> tuple[str, str | None]:
    """``"NAME"`` or ``"NAME:TAG"`` (NAME may be ``plugin/name``) as (name, tag or None)."""
    name, sep, tag = text.partition(":")
    if not name or (sep and not tag):
        raise ValueError(f"{text!r}: name a model as NAME or NAME:TAG, e.g. resnet50_v1d:default")
    return name, tag or None


def _variants(name: str, from_dir: Path | None) -> tuple[str, tuple[WeightVariant, ...]]:
    """A model's qualified name and weight variants: from the plugins, then ``from_dir``'s index.

    The folder's entries come after the plugin's and add the tags it lacks, such as the
    ``default.onnx`` that ``gluon-hub convert`` writes for a model a plugin provides.
    """
    from .._api import info
    from ..errors import UnknownNameError

    index = from_dir / "weights.json" if from_dir is not None else None
    entries = weights_from_index(index) if index is not None and index.is_file() else {}
    published = entries.get(name, ())
    try:
        spec = info(name)
    except UnknownNameError:
        if not published:
            raise
        return name, published
    # convert and publish key the index by the spec's plain name, also when asked as plugin/name
    published = published or entries.get(spec.name, ())
    tags = {v.tag for v in spec.weights}
    return spec.qualified_name, spec.weights + tuple(v for v in published if v.tag not in tags)


def _file_entry(name: str) -> Any:
    """The dataset or embedding spec of ``name`` where it names no model, else None (and the
    model lookup then says what is wrong with the name)."""
    from .._hub import get_hub
    from ..errors import UnknownNameError
    from ..specs import FILE_KINDS

    hub = get_hub()
    try:
        hub.lookup("models", name)
        return None
    except UnknownNameError:
        pass
    for kind in FILE_KINDS[1:]:
        try:
            return hub.lookup(kind, name)
        except UnknownNameError:
            continue
    return None


def _select(name: str, variants: tuple[WeightVariant, ...], tag: str | None, all_tags: bool):
    if not variants:
        raise ValueError(f"model {name!r} has no published weights to bundle")
    if tag is not None:
        chosen = [v for v in variants if v.tag == tag]
        if not chosen:
            raise KeyError(
                f"model {name!r} has no weights tagged {tag!r}; tags: "
                f"{', '.join(v.tag for v in variants)}"
            )
        return chosen
    return list(variants) if all_tags else [variants[0]]


def _local_file(ref: FileRef, from_dir: Path | None, root: Any) -> Path:
    """The verified delivered file of ``ref``: from ``from_dir``, else through the cache."""
    if from_dir is None:
        from ..cache import fetch

        return fetch(ref, root=root)
    names = [n for n in (ref.filename, ref.extract) if n]
    names += [PurePosixPath(n).name for n in names] + [u.rsplit("/", 1)[-1] for u in ref.urls]
    for candidate in dict.fromkeys(from_dir / n for n in names):
        if candidate.is_file() and hash_file_sized(candidate, [ref.algorithm])[0][ref.algorithm] == ref.hash:
            return candidate
    raise FileNotFoundError(
        f"no file in {from_dir} matches {ref.hash} (looked for {', '.join(dict.fromkeys(names))}); "
        "leave out --from-dir to fetch it through the cache"
    )


def _member_name(ref: FileRef, taken: set[str]) -> str:
    """``weights/<file name>``, made safe, with the digest in front where names collide."""
    source = ref.extract or ref.filename or ref.urls[0].split("?", 1)[0]
    base = re.sub(r"[^A-Za-z0-9_.\-]+", "_", PurePosixPath(source).name).lstrip("._-") or "file"
    name = f"{FILES_DIR}/{base}"
    if name in taken:
        name = f"{FILES_DIR}/{ref.digest[:16]}-{base}"
    return name


def _manifest_hash(manifest: dict[str, Any]) -> str:
    body = {k: v for k, v in manifest.items() if k != "manifest_hash"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hash_bytes(canonical.encode("utf-8"))


def write_bundle(
    targets: Sequence[str],
    output: str | os.PathLike[str],
    *,
    from_dir: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    all_tags: bool = False,
) -> list[BundleFile]:
    """Write a bundle of the named models' weights; see :func:`gluon_hub.publishing.bundle`."""
    if not targets:
        raise ValueError("name at least one model to bundle")
    source_dir = Path(from_dir) if from_dir is not None else None
    if source_dir is not None and not source_dir.is_dir():
        raise NotADirectoryError(f"--from-dir {source_dir} is not a directory")
    files: dict[str, tuple[FileRef, Path, list[str]]] = {}  # by hash, in order
    for target in targets:
        name, tag = parse_target(target)
        entry = _file_entry(name) if tag is None else None
        if entry is not None:  # an embedding's or dataset's files, labelled "embedding nlp/glove.6B.50d"
            for ref in entry.files:
                label = f"{entry.noun} {entry.qualified_name}"
                if ref.hash in files:
                    files[ref.hash][2].append(label)
                else:
                    files[ref.hash] = (ref, _local_file(ref, source_dir, root), [label])
            continue
        qualified, variants = _variants(name, source_dir)
        for variant in _select(qualified, variants, tag, all_tags):
            label = f"{qualified}:{variant.tag}"
            if variant.file.hash in files:
                files[variant.file.hash][2].append(label)
            else:
                files[variant.file.hash] = (variant.file, _local_file(variant.file, source_dir, root), [label])
    entries: list[BundleFile] = []
    taken: set[str] = set()
    for ref, path, labels in files.values():
        hashes, size = hash_file_sized(path, ["sha256", ref.algorithm])
        if hashes[ref.algorithm] != ref.hash or (ref.size is not None and size != ref.size):
            raise ValueError(f"{path} changed while bundling: it no longer matches {ref.hash}")
        member = _member_name(ref, taken)
        taken.add(member)
        entries.append(BundleFile(member, hashes["sha256"], size, ref, tuple(dict.fromkeys(labels))))
    manifest: dict[str, Any] = {
        "schema": SCHEMA,
        "created_by": f"gluon-hub {__version__}",
        "files": [
            {"path": e.path, "hash": e.sha256, "size": e.size, "file": _to_jsonable(e.ref),
             "models": list(e.models)}
            for e in entries
        ],
    }
    manifest["manifest_hash"] = _manifest_hash(manifest)
    _write_tar(Path(output), manifest, [(e, files[e.ref.hash][1]) for e in entries])
    return entries


def _tarinfo(name: str, size: int, mtime: float) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = size, int(mtime), 0o644
    return info


def _write_tar(output: Path, manifest: dict[str, Any], files: list[tuple[BundleFile, Path]]) -> None:
    """Write the tar to a temp file beside ``output`` and rename it into place."""
    mode: Literal["w:gz", "w"] = "w:gz" if output.name.endswith((".tar.gz", ".tgz")) else "w"
    output.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".tmp", dir=output.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        now = time.time()
        with tarfile.open(tmp, mode, format=tarfile.PAX_FORMAT) as tar:
            data = (json.dumps(manifest, indent=1) + "\n").encode("utf-8")
            tar.addfile(_tarinfo(MANIFEST, len(data), now), io.BytesIO(data))
            for entry, path in files:
                with open(path, "rb") as stream:
                    tar.addfile(_tarinfo(entry.path, entry.size, now), stream)
        tmp.replace(output)
    finally:
        tmp.unlink(missing_ok=True)


# -- reading ---------------------------------------------------------------------------


def _check_member(member: tarfile.TarInfo, archive: Path) -> None:
    name = member.name
    where = f"bundle {archive}: member {name!r}"
    if member.issym() or member.islnk():
        raise BundleError(f"{where} is a link; bundles hold only regular files")
    if not member.isreg():
        raise BundleError(f"{where} is not a regular file (type {member.type!r})")
    if name.startswith("/") or PurePosixPath(name).is_absolute() or re.match(r"^[A-Za-z]:", name):
        raise BundleError(f"{where} has an absolute path")
    if ".." in name.replace("\\", "/").split("/"):
        raise BundleError(f"{where} leads outside the bundle ('..')")
    if name != MANIFEST and not _MEMBER_RE.match(name):
        raise BundleError(f"{where} is not a manifest or a file under {FILES_DIR}/")


def _read_manifest(tar: tarfile.TarFile, member: tarfile.TarInfo, archive: Path) -> list[BundleFile]:
    if member.size > MAX_MANIFEST_BYTES:
        raise BundleError(f"bundle {archive}: {MANIFEST} is {member.size} bytes, too large")
    stream = tar.extractfile(member)
    try:
        manifest = json.loads(stream.read().decode("utf-8"))  # type: ignore[union-attr]
    except (UnicodeDecodeError, ValueError) as exc:
        raise BundleError(f"bundle {archive}: {MANIFEST} is not valid JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("schema") != SCHEMA:
        found = manifest.get("schema") if isinstance(manifest, dict) else None
        raise BundleError(f"bundle {archive}: manifest schema is {found!r}, this hub reads {SCHEMA!r}")
    if manifest.get("manifest_hash") != _manifest_hash(manifest):
        raise BundleError(
            f"bundle {archive}: {MANIFEST} does not match its own hash "
            f"({manifest.get('manifest_hash')!r}); the manifest was altered or damaged"
        )
    entries = []
    for i, item in enumerate(manifest.get("files") or ()):
        try:
            if not isinstance(item, dict):
                raise ValueError("not an object")
            ref = _from_jsonable(FileRef, item["file"])
            sha256, size = item["hash"], item["size"]
            _check_hash(sha256)
            if not sha256.startswith("sha256:"):
                raise ValueError(f"hash {sha256!r} must be a sha256")
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise ValueError(f"size {size!r} must be a non-negative int")
            if ref.size is not None and ref.size != size:
                raise ValueError(f"size {size} differs from the file's declared size {ref.size}")
            models = tuple(str(m) for m in item.get("models", ()))
            entries.append(BundleFile(str(item["path"]), sha256, size, ref, models))
        except (KeyError, TypeError, ValueError) as exc:
            raise BundleError(f"bundle {archive}: manifest entry {i} is invalid: {exc}") from None
    if not entries:
        raise BundleError(f"bundle {archive}: the manifest lists no files")
    return entries


def verify_bundle(tar: tarfile.TarFile, archive: Path) -> tuple[list[BundleFile], dict[str, tarfile.TarInfo]]:
    """Check every member and every hash; raise BundleError naming the first problem."""
    members: dict[str, tarfile.TarInfo] = {}
    for member in tar.getmembers():
        _check_member(member, archive)
        if member.name in members:
            raise BundleError(f"bundle {archive}: member {member.name!r} appears twice")
        members[member.name] = member
    if MANIFEST not in members:
        raise BundleError(f"bundle {archive} has no {MANIFEST}; it is not a gluon-hub bundle")
    entries = _read_manifest(tar, members[MANIFEST], archive)
    declared = {e.path for e in entries}
    if len(declared) != len(entries):
        raise BundleError(f"bundle {archive}: the manifest lists a path twice")
    extra = set(members) - declared - {MANIFEST}
    if extra:
        raise BundleError(f"bundle {archive}: members not in the manifest: {sorted(extra)}")
    for entry in entries:
        found = members.get(entry.path)
        if found is None:
            raise BundleError(f"bundle {archive}: {entry.path} is in the manifest but not in the archive")
        if found.size != entry.size:
            raise BundleError(
                f"bundle {archive}: {entry.path} is {found.size} bytes, the manifest says {entry.size}"
            )
        hashes, size = hash_stream(tar.extractfile(found), ["sha256", entry.ref.algorithm])  # type: ignore[arg-type]
        for expected in (entry.sha256, entry.ref.hash):
            actual = hashes[expected.split(":", 1)[0]]
            if actual != expected or size != entry.size:
                raise BundleError(
                    f"bundle {archive}: {entry.path} is corrupted: expected {expected}, got {actual}; "
                    "nothing was imported"
                )
    return entries, members


def read_bundle(
    archive: str | os.PathLike[str], root: str | os.PathLike[str] | None = None
) -> list[tuple[BundleFile, Path]]:
    """Verify a bundle, then add its files to the cache; see :func:`gluon_hub.publishing.import_bundle`."""
    from ..cache import add_file

    path = Path(archive)
    try:
        tar = tarfile.open(path, "r:*")
    except tarfile.TarError as exc:
        raise BundleError(f"{path} is not a readable tar bundle: {exc}") from None
    with tar:
        try:
            entries, members = verify_bundle(tar, path)
        except tarfile.TarError as exc:
            raise BundleError(f"bundle {path} is damaged: {exc}") from None
        # Everything is verified; now stage one file at a time (bounded disk use) and let
        # the cache check it once more and rename it into place.
        imported = []
        with tempfile.TemporaryDirectory(prefix="gluon-hub-import-") as tmp:
            for entry in entries:
                staged = Path(tmp) / PurePosixPath(entry.path).name
                with tar.extractfile(members[entry.path]) as src, open(staged, "wb") as dst:  # type: ignore[union-attr]
                    while chunk := src.read(_CHUNK):
                        dst.write(chunk)
                imported.append((entry, add_file(entry.ref, staged, root=root)))
                staged.unlink()
    remember_names(entries, root)
    return imported


#: The weights index, in the cache home, of the models whose files bundles brought.
IMPORTED_INDEX = "imported-weights.json"


def remember_names(entries: list[BundleFile], root: str | os.PathLike[str] | None) -> None:
    """Record which model and tag each imported file is, so that it is found by model name
    where no installed plugin names it (an ONNX file converted elsewhere)."""
    from ..cache import cache_dir
    from ._weights_index import update_index

    index = cache_dir(root) / IMPORTED_INDEX
    for entry in entries:
        for label in entry.models:
            if ":" not in label:  # a dataset's or embedding's file: its spec names it by hash
                continue
            name, _, tag = label.rpartition(":")
            update_index(index, name.rpartition("/")[2], WeightVariant(tag=tag, file=entry.ref), quiet=True)
