"""Dependency declarations are true (issue 13.5): every plugin declares what it imports,
numpy's floor is the version CI tests on Python 3.10, and every Python CI runs has pins."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest depends on tomli before Python 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PLUGINS = sorted(p for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").is_file())

#: Import names whose distribution is named otherwise.
DISTRIBUTION_OF = {"PIL": "pillow", "cv2": "opencv-python", "gluon_hub": "gluon-hub", "gluon_cv_core": "gluon-cv-core",
                   "gluon_nlp_core": "gluon-nlp-core", "gluon_contrib": "gluon-contrib"}


def _project(folder: Path) -> dict:
    return tomllib.loads((folder / "pyproject.toml").read_text())["project"]


def _declared(project: dict) -> set[str]:
    requirements = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    return {Requirement(r).name.lower().replace("_", "-") for r in requirements}


def _imported(package: Path) -> set[str]:
    """Top-level modules the package's own code (not its tests) imports."""
    names: set[str] = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names |= {a.name.partition(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.partition(".")[0])
    return names - set(sys.stdlib_module_names) - {"__future__"}


@pytest.mark.parametrize("folder", PLUGINS, ids=lambda p: p.name)
def test_each_plugin_declares_every_package_it_imports(folder):
    project = _project(folder)
    own = project["name"].replace("-", "_")
    imported = _imported(folder / own) - {own}
    assert "mxnet" not in imported, "plugins import MXNet through gluon_hub.compat, which checks it"
    missing = {DISTRIBUTION_OF.get(m, m).lower() for m in imported} - _declared(project)
    assert not missing, f"{project['name']} imports {sorted(missing)} without declaring them"


def test_numpy_floor_is_what_ci_tests_on_the_oldest_python():
    core = _project(ROOT)
    numpy = next(Requirement(r) for r in core["dependencies"] if r.startswith("numpy"))
    floor = next(s.version for s in numpy.specifier if s.operator == ">=")
    pins = (ROOT / "constraints" / "py3.10.txt").read_text()
    assert re.search(rf"^numpy=={re.escape(floor)}(\.0)?$", pins, re.MULTILINE), (
        f"constraints/py3.10.txt must pin numpy to the declared floor {floor}")
    for folder in PLUGINS:
        for requirement in map(Requirement, _project(folder)["dependencies"]):
            if requirement.name == "numpy":
                assert requirement.specifier == numpy.specifier, folder.name


@pytest.mark.parametrize("version", ["3.10", "3.11", "3.12"])
def test_every_python_ci_runs_has_pinned_versions(version):
    lines = (ROOT / "constraints" / f"py{version}.txt").read_text().splitlines()
    pins = [line for line in lines if line and not line.startswith("#")]
    assert pins and all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[^\s;]+", line) for line in pins), pins
    assert any(line.startswith("mxnet==1.9.1") for line in pins)
