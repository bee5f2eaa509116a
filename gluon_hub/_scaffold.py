"""Writing a new plugin project from the template shipped in ``gluon_hub/_template``.

Template files end in ``.tmpl`` (so that neither setuptools nor pytest takes them for
code) and use ``{{key}}`` placeholders; the ``package`` folder is renamed to the
project's import package.
"""

from __future__ import annotations

import keyword
import re
from importlib import resources
from pathlib import Path

from ._version import HUB_API_VERSION, __version__

_DIST_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
_PLUGIN_RE = re.compile(r"^[a-z][a-z0-9_]*$")


def project_names(name: str, plugin: str | None = None) -> dict[str, str]:
    """The names a project called ``name`` uses: distribution, package, plugin, model."""
    if not isinstance(name, str) or not _DIST_RE.match(name):
        raise ValueError(
            f"invalid project name {name!r}: use letters, digits, '-', '_' and '.', "
            "starting and ending with a letter or digit (e.g. gluon-hub-mymodels)"
        )
    package = re.sub(r"[-_.]+", "_", name).lower()
    if not package.isidentifier() or keyword.iskeyword(package):
        raise ValueError(f"project name {name!r} does not give a Python package name "
                         f"({package!r}); start it with a letter")
    if plugin is None:
        plugin = re.sub(r"^gluon_(hub_)?", "", package) or package
    if not _PLUGIN_RE.match(plugin):
        raise ValueError(f"invalid plugin name {plugin!r}: lower-case letters, digits and '_', "
                         "starting with a letter")
    major, minor = __version__.split(".")[:2]
    api_major = int(HUB_API_VERSION.split(".")[0])
    return {
        "distribution": re.sub(r"[-_.]+", "-", name).lower(),
        "package": package,
        "plugin": plugin,
        "model": f"{plugin}_tiny_cnn",
        "hub_requirement": f"gluon-hub~={major}.{minor}",
        "hub_api": f">={api_major},<{api_major + 1}",
    }


def _render(text: str, names: dict[str, str]) -> str:
    for key, value in names.items():
        text = text.replace("{{" + key + "}}", value)
    leftover = re.search(r"\{\{\w+\}\}", text)
    if leftover:
        raise RuntimeError(f"template placeholder {leftover.group()} has no value")
    return text


def write_plugin_project(
    name: str, parent: str | Path = ".", plugin: str | None = None, force: bool = False
) -> Path:
    """Write a complete plugin project into ``parent/name`` and return its folder.

    The project builds and installs as is: a pyproject with the ``gluon_hub`` entry
    point, the hook module, one model with full metadata, a test and a README.
    """
    names = project_names(name, plugin)
    target = Path(parent) / name
    if target.exists() and any(target.iterdir()) and not force:
        raise FileExistsError(f"{target} exists and is not empty; choose another name or "
                              "pass --force to overwrite the template's files in it")
    template = resources.files("gluon_hub").joinpath("_template")
    written = 0
    stack = [(template, target)]
    while stack:
        source, dest = stack.pop()
        for entry in source.iterdir():
            if entry.name == "__pycache__":
                continue
            if entry.is_dir():
                folder = names["package"] if entry.name == "package" else entry.name
                stack.append((entry, dest / folder))
                continue
            dest.mkdir(parents=True, exist_ok=True)
            if entry.name.endswith(".tmpl"):
                (dest / entry.name[: -len(".tmpl")]).write_text(
                    _render(entry.read_text(encoding="utf-8"), names), encoding="utf-8")
            else:
                (dest / entry.name).write_bytes(entry.read_bytes())
            written += 1
    if not written:
        raise RuntimeError("the plugin template is missing from this gluon_hub installation")
    return target
