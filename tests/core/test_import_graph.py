"""The core's import graph has no cycle: contracts are leaves and machinery imports downwards.

A cycle means a module cannot be read, tested or moved without the ones above it, and Python
only gets away with it through function-local imports or import order. So every import counts
here: module level, inside functions, under ``if TYPE_CHECKING:``, relative or absolute.
The graph is built from the source with ``ast``, so nothing is imported to check it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import gluon_hub

PACKAGE_DIR = Path(gluon_hub.__file__).parent


def _module_files(package_dir: Path) -> dict[str, Path]:
    """Map each module of the package (``gluon_hub.x.y``) to its file; data folders are skipped."""
    modules: dict[str, Path] = {}
    for path in sorted(package_dir.rglob("*.py")):
        rel = path.relative_to(package_dir.parent)
        # A .py file under a folder without __init__.py (a template) is data, not a module.
        if any(not (package_dir.parent / Path(*rel.parts[:i]) / "__init__.py").is_file()
               for i in range(1, len(rel.parts))):
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of the package that ``name`` imports anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                # `from pkg import sub` imports the submodule; `from mod import name` the module.
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in modules else target)
    return {m for m in found if m in modules and m != name}


def import_graph(package_dir: Path = PACKAGE_DIR) -> dict[str, set[str]]:
    """Each module of the package mapped to the package modules it imports."""
    modules = _module_files(package_dir)
    return {name: _imported_modules(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as ``[a, b, ..., a]``, or None if the graph is acyclic."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_graph_sees_function_local_and_relative_imports(tmp_path: Path) -> None:
    """The checker itself finds a cycle closed only by a function-local ``from . import``."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    from .. import a\n")
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.a"}
    assert find_cycle(graph) == ["pkg.a", "pkg.sub.b", "pkg.a"]


def test_core_has_no_import_cycle() -> None:
    graph = import_graph()
    assert "gluon_hub.specs" in graph and "gluon_hub._cache._fetch" in graph
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle in gluon_hub: " + " -> ".join(cycle)


def test_first_party_plugins_import_only_the_cores_public_modules() -> None:
    """A plugin that reaches into ``gluon_hub._x`` breaks when the core moves its internals;
    third-party plugins get only the public modules, and so do ours."""
    root = PACKAGE_DIR.parent
    packages = sorted(p for p in (root / "plugins").glob("*/gluon_*") if (p / "__init__.py").is_file())
    assert len(packages) >= 4, packages
    private = []
    for package in packages:
        for path in sorted(package.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
                private += [f"{path.relative_to(root)}:{node.lineno} {n}" for n in names
                            if n.startswith("gluon_hub._")]
    assert not private, private
