"""Find a file in the caches or fetch it from the first source that delivers the right bytes."""

from __future__ import annotations

import errno
import logging
import os
from pathlib import Path

from ..specs import FileRef
from . import _store
from ._archive import extract_member
from ._download import Result, SourceFailed, copy_local, encoded_note, http_download, local_path
from ._errors import (
    Attempt,
    CacheNotWritableError,
    DownloadError,
    OfflineMissError,
    UnsafeArchiveError,
)
from ._progress import Progress
from ._settings import PUBLIC_PREFIX, Settings, settings as read_settings

log = logging.getLogger("gluon_hub.cache")


def label(ref: FileRef) -> str:
    return f"{_store.delivered_name(ref)} ({ref.hash})"


def find_cached(ref: FileRef, cfg: Settings) -> Path | None:
    """The verified cached file for ``ref`` in the user's or a shared cache, if any.

    A corrupted file in the user's cache is removed (so it is fetched again); one in a
    shared cache is skipped with a warning, since that cache is read-only to us.
    """
    for home in (cfg.home, *cfg.shared):
        path = _store.visible_file(_store.entry_dir(home, ref.hash))
        if path is None:
            continue
        state = _store.check_entry(path, ref)
        if state:
            return path
        if state is False:
            if home == cfg.home:
                log.warning("cached %s does not match %s; fetching it again", path, ref.hash)
                _store.remove_entry_file(path)
            else:
                log.warning("shared cache file %s does not match %s; ignoring it", path, ref.hash)
    return None


def sources(ref: FileRef, cfg: Settings) -> list[str]:
    """Every place to try, in order: each mirror with ``filename``, then ``urls``.

    The public repository (the mirror when none is configured) holds only GluonCV's and
    GluonNLP's files, all under ``gluon/``; any other file is never asked of it, so a
    plugin's file names do not leak there and an offline first use does not wait on it.
    """
    found = []
    if ref.filename:
        for base in cfg.mirrors:
            if base == cfg.public_mirror and not ref.filename.startswith(PUBLIC_PREFIX):
                continue
            if local_path(base) is None:
                found.append(base.rstrip("/") + "/" + ref.filename)
            else:
                found.append(str(Path(local_path(base)) / ref.filename))  # type: ignore[arg-type]
    found += ref.urls
    if cfg.offline:
        found = [s for s in found if local_path(s) is not None]
    return list(dict.fromkeys(found))


def _fetch_command(ref: FileRef) -> str:
    """A shell command that fetches exactly ``ref`` into the cache: the cache knows no model
    or dataset name (``load`` and ``load_dataset`` put theirs in the error)."""
    import json
    import shlex

    def literal(value: object) -> str:  # double-quoted, so the shell's single quotes hold it
        if isinstance(value, tuple):
            return "(" + "".join(literal(v) + ", " for v in value).rstrip(" ") + ")"
        return json.dumps(value) if isinstance(value, str) else repr(value)

    fields = ", ".join(f"{name}={literal(value)}" for name, value in vars(ref).items()
                       if value not in (None, ()))
    code = f"import gluon_hub; gluon_hub.fetch(gluon_hub.FileRef({fields}))"
    return f"python -c {shlex.quote(code)}"


def _prepare(entry: Path) -> None:
    try:
        entry.mkdir(parents=True, exist_ok=True)
        probe = _store.new_temp(entry, "probe")
        probe.touch()
        probe.unlink()
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise CacheNotWritableError(
                exc.errno,
                f"the cache directory {entry} is not writable ({os.strerror(exc.errno)}); set "
                "GLUON_HUB_HOME to a writable directory (a read-only pre-populated cache can "
                "still be used through GLUON_HUB_SHARED_CACHE)",
            ) from None
        raise


#: Characters of an unexpected body quoted in an error.
EXCERPT = 160
_MARKUP = (b"<?xml", b"<!doctype", b"<html", b"<head", b"<body", b"<error")


def _what_came_back(result: Result, part: Path) -> str:
    """What a source sent instead of the file, when it says or shows so; "" otherwise.

    An HTML or XML page (S3's ``AccessDenied``, a login page) or a body encoded although
    ``identity`` was asked for explains a mismatch better than two hashes do.
    """
    notes = []
    if result.encoding:
        notes.append(encoded_note(result.encoding))
    try:
        with open(part, "rb") as stream:
            head = stream.read(4 * EXCERPT)
    except OSError:
        head = b""
    kind = (result.content_type or "").split(";", 1)[0].strip().lower()
    if (kind.startswith("text/") or kind.endswith(("/html", "/xml", "+xml", "/json"))
            or head.lstrip()[:9].lower().startswith(_MARKUP)):
        text = "".join(c if c.isprintable() else " " for c in head.decode("utf-8", "replace"))
        excerpt = " ".join(text.split())
        if len(excerpt) > EXCERPT:
            excerpt = excerpt[:EXCERPT] + "..."
        notes.append(f"it answered with Content-Type {result.content_type or '(none)'} and a "
                     f"body that is not the file, starting: {excerpt!r}")
    return "; ".join(notes)


#: A published zip may be at most ARCHIVE_FACTOR times its member's size plus ARCHIVE_SLACK.
#: Deflate never grows data by more than about 0.03 % (stored blocks), a stored member is its
#: own size, and zip headers add some hundred bytes per member, so a zip of its one member
#: stays below 1x + a few KiB; 2x + 1 MiB leaves room for a few small extra members (a
#: README, a licence) while a server sending gigabytes for a 100 MB file is cut off early.
ARCHIVE_FACTOR = 2
ARCHIVE_SLACK = 1 << 20


def archive_limit(member_size: int) -> int:
    """The most bytes a zip whose member has ``member_size`` bytes may take to download."""
    return ARCHIVE_FACTOR * member_size + ARCHIVE_SLACK


def _from_source(source: str, ref: FileRef, entry: Path, cfg: Settings, progress: Progress) -> Path:
    """Deliver ``ref`` from one source into the cache, or raise SourceFailed."""
    archive = ref.extract is not None
    name = _store.download_name(ref)
    check = ref.archive_hash if archive else ref.hash
    algorithm = check.split(":", 1)[0] if check else "sha256"
    if ref.size is not None and not archive:
        limit, note = ref.size, " (the size the spec declares)"
    elif ref.size is not None and archive_limit(ref.size) < cfg.max_download_size:
        limit, note = archive_limit(ref.size), (
            f" (at most {ARCHIVE_FACTOR} x the {ref.size} bytes the spec declares for member "
            f"{ref.extract!r} + {ARCHIVE_SLACK >> 20} MiB: a zip holds its member compressed "
            "or stored, plus headers of a few hundred bytes)")
    else:
        limit, note = cfg.max_download_size, " (GLUON_HUB_MAX_DOWNLOAD_SIZE)"
    part = _store.claim_partial(entry, name)
    keep = False
    try:
        path = local_path(source)
        if path is None:
            result = http_download(source, part, algorithm, cfg, limit, progress, limit_note=note)
        else:
            result = copy_local(path, part, algorithm, limit, progress, limit_note=note)
        if check is not None and result.hash != check:
            raise _Mismatch(check, result.hash, detail=_what_came_back(result, part))
        if not archive:
            if ref.size is not None and result.size != ref.size:
                detail = _what_came_back(result, part)
                raise SourceFailed(f"size {result.size} bytes, expected {ref.size}"
                                   + (f"; {detail}" if detail else ""))
            final = entry / _store.delivered_name(ref)
            return _store.place(part, final, ref.hash, source)
        tmp = _store.new_temp(entry, _store.delivered_name(ref))
        try:
            try:
                digest = extract_member(
                    part, ref.extract, tmp, ref.algorithm,  # type: ignore[arg-type]
                    ref.size if ref.size is not None else cfg.max_extract_size, name=source,
                )
            except UnsafeArchiveError as exc:
                detail = _what_came_back(result, part)
                if detail:
                    raise SourceFailed(f"{exc}; {detail}") from None
                raise
            if digest != ref.hash:
                raise _Mismatch(ref.hash, digest, f"member {ref.extract!r}: ")
            return _store.place(tmp, entry / _store.delivered_name(ref), ref.hash, source)
        finally:
            _store.discard(tmp)
    except SourceFailed as exc:
        keep = exc.keep_partial
        raise
    except KeyboardInterrupt:
        keep = True  # a rerun resumes it
        raise
    finally:
        if not keep:
            _store.discard(part)
        _store.release_partial(part)


class _Mismatch(SourceFailed):
    def __init__(self, expected: str, actual: str, prefix: str = "", detail: str = "") -> None:
        super().__init__(f"{prefix}hash mismatch" + (f": {detail}" if detail else ""))
        self.expected, self.actual = expected, actual


def _mismatch_hint(ref: FileRef) -> str:
    """What to do when a source sent other bytes than the spec's hash."""
    return (
        "A hash mismatch means a source sent other bytes than the published file (a broken "
        "or tampered mirror, an error page, or a changed file). Try another mirror (list a "
        f"good one first in GLUON_HUB_MIRRORS), run 'gluon-hub cache purge {ref.hash}' to drop "
        "partial downloads, and report the mirror named above to whoever runs it (or the "
        "plugin's authors, when every source disagrees)."
    )


def fetch(ref: FileRef, root: str | os.PathLike[str] | None = None, progress: bool | None = None) -> Path:
    """Path of the verified file for ``ref``, fetched into the cache when missing."""
    if not isinstance(ref, FileRef):
        raise TypeError(f"fetch() takes a gluon_hub.FileRef, got {type(ref).__name__}")
    cfg = read_settings(root)
    hit = find_cached(ref, cfg)
    if hit is not None:
        return hit
    todo = sources(ref, cfg)
    if cfg.offline and not todo:
        raise OfflineMissError(label(ref), [], _fetch_command(ref), ref.hash)
    if not todo:  # only a plugin's file named by filename alone, with no mirror configured
        raise DownloadError(label(ref), [], (
            f"{ref.filename} is not one of GluonCV's or GluonNLP's files (under "
            f"{PUBLIC_PREFIX}), the only ones the public repository {cfg.public_mirror} "
            "holds; list the mirror of the plugin that provides it in GLUON_HUB_MIRRORS"))
    entry = _store.entry_dir(cfg.home, ref.hash)
    _prepare(entry)
    with _store.locked(entry, cfg.lock_timeout):
        hit = find_cached(ref, cfg)  # another process may have fetched it meanwhile
        if hit is not None:
            return hit
        attempts: list[Attempt] = []
        bar = Progress(_store.delivered_name(ref), cfg.progress if progress is None else progress)
        try:
            for source in todo:
                try:
                    return _from_source(source, ref, entry, cfg, bar)
                except _Mismatch as exc:
                    attempts.append(Attempt(source, str(exc), exc.expected, exc.actual))
                except (SourceFailed, UnsafeArchiveError) as exc:
                    attempts.append(Attempt(source, str(exc)))
                log.warning("fetching %s: %s", label(ref), attempts[-1])
        finally:
            bar.close()
    if cfg.offline:
        raise OfflineMissError(label(ref), attempts, _fetch_command(ref), ref.hash)
    hint = _mismatch_hint(ref) if any(a.expected is not None for a in attempts) else ""
    raise DownloadError(label(ref), attempts, hint)


def add_file(ref: FileRef, path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> Path:
    """Copy a local file into the cache under ``ref`` once its hash matches.

    ``path`` may be the delivered file itself or, when ``ref.extract`` is set, the
    published archive.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is not a file")
    cfg = read_settings(root)
    entry = _store.entry_dir(cfg.home, ref.hash)
    _prepare(entry)
    plain = FileRef(hash=ref.hash, size=ref.size, urls=(path.as_uri(),),
                    filename=_store.delivered_name(ref)) if ref.extract else ref
    progress = Progress("", False)
    with _store.locked(entry, cfg.lock_timeout):
        try:
            return _from_source(str(path), plain, entry, cfg, progress)
        except SourceFailed as exc:
            first = exc
        if not ref.extract:
            raise ValueError(f"{path} is not the file of {label(ref)}: {_why(first)}")
        try:
            return _from_source(str(path), ref, entry, cfg, progress)
        except (SourceFailed, UnsafeArchiveError) as exc:
            raise ValueError(
                f"{path} is neither the file nor the archive of {label(ref)}: as the file, "
                f"{_why(first)}; as the archive, {_why(exc)}"
            ) from None


def _why(exc: Exception) -> str:
    if isinstance(exc, _Mismatch):
        return f"{exc} (expected {exc.expected}, got {exc.actual})"
    return str(exc)

def fetch_params(
    ref: FileRef, root: str | os.PathLike[str] | None = None, progress: bool | None = None
) -> Path:
    """Like :func:`fetch`, then check the file is an MXNet NDArray file (or a safetensors
    file) before anything parses it.

    Use this, not :func:`fetch`, for any file that goes to ``load_parameters``: a pickle
    or a header declaring more bytes than the file holds is refused before MXNet parses it.
    """
    path = fetch(ref, root=root, progress=progress)
    check_weights_file(path)
    return path


def check_weights_file(path: str | os.PathLike[str]) -> str:
    """The format of a weights file, ``"params"`` or ``"safetensors"``, once its structure
    is checked; :class:`ParamsFormatError` for anything else (told apart by content, not name)."""
    from ._paramsfile import check_params_file
    from ._safetensorsfile import check_safetensors_file, is_safetensors

    if is_safetensors(path):
        check_safetensors_file(path)
        return "safetensors"
    check_params_file(path)
    return "params"
