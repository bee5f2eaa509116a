"""Where the cache lives and where files come from: env vars over the config file
(:mod:`gluon_hub._config`) over defaults."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .. import _env
from .._config import APP_NAME, CACHE_NUMBER_DEFAULTS, config_path, read_config
from ..specs import URL_SCHEMES, url_scheme

#: The public repository GluonCV and GluonNLP published their files to.
DEFAULT_MIRROR = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"
#: Where in that repository GluonCV and GluonNLP put every file: it holds nothing else, so
#: no other file (a third-party plugin's) is ever asked of it, which would leak the name.
PUBLIC_PREFIX = "gluon/"


@dataclass(frozen=True)
class Settings:
    """Everything one fetch needs to know about the environment, read once per call."""

    home: Path
    shared: tuple[Path, ...]
    mirrors: tuple[str, ...]
    #: The repository of GluonCV's and GluonNLP's files when it is in ``mirrors`` because no
    #: mirror was configured (then only their files are asked of it); None otherwise.
    public_mirror: str | None
    offline: bool
    progress: bool | None
    lock_timeout: float
    connect_timeout: float
    read_timeout: float
    retries: int
    max_extract_size: int
    max_download_size: int
    download_deadline: float
    max_index_size: int


def _split(value: str | list[str] | None, pattern: str) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else re.split(pattern, value)
    return [str(v).strip() for v in items if str(v).strip()]


def check_mirror(base: str) -> str:
    """A mirror base as given, or ValueError when its scheme is not http(s)/file/a path.

    Checked when the settings are read, so that ``ftp://host/`` is refused at once rather
    than read as a relative directory named ``ftp:``.
    """
    scheme = url_scheme(base)
    if scheme not in ("", *URL_SCHEMES):
        raise ValueError(
            f"mirror {base!r}: scheme {scheme!r} is not supported; the supported schemes are "
            f"{', '.join(URL_SCHEMES)} (or a plain directory); fix GLUON_HUB_MIRRORS or "
            f"'mirrors' in {config_path()}"
        )
    return base


def default_home() -> Path:
    """The platform's user cache directory for gluon_hub."""
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def settings(root: str | os.PathLike[str] | None = None) -> Settings:
    """The effective settings; ``root`` overrides ``GLUON_HUB_HOME`` and the config file."""
    config = read_config()
    home = root or _env.cache_home() or config.get("home")
    shared = _split(_env.shared_caches() or config.get("shared_caches"), r"[,%s]" % os.pathsep)
    mirrors = [check_mirror(m) for m in _split(_env.mirrors() or config.get("mirrors"), r"[,\s]+")]
    public = None if mirrors else DEFAULT_MIRROR
    mirrors = mirrors or [DEFAULT_MIRROR]
    offline = _env.offline()
    progress = _env.progress()
    numbers = {}
    for key, value in _env.cache_numbers().items():
        if value is None:
            value = config.get(key, CACHE_NUMBER_DEFAULTS[key])
        if not isinstance(value, (int, float)) or value < 0:
            raise ValueError(f"cache setting {key} must be a non-negative number, got {value!r}")
        if key == "download_deadline" and value == 0:
            raise ValueError("cache setting download_deadline must be more than 0 seconds")
        numbers[key] = value
    return Settings(
        home=Path(home).expanduser() if home else default_home(),
        shared=tuple(Path(p).expanduser() for p in shared),
        mirrors=tuple(mirrors),
        public_mirror=public,
        offline=bool(config.get("offline", False)) if offline is None else offline,
        progress=config.get("progress") if progress is None else progress,
        lock_timeout=float(numbers["lock_timeout"]),
        connect_timeout=float(numbers["connect_timeout"]),
        read_timeout=float(numbers["read_timeout"]),
        retries=int(numbers["retries"]),
        max_extract_size=int(numbers["max_extract_size"]),
        max_download_size=int(numbers["max_download_size"]),
        download_deadline=float(numbers["download_deadline"]),
        max_index_size=int(numbers["max_index_size"]),
    )
