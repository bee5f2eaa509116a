"""Fixtures for the core: fake plugin distributions on sys.path and a fresh hub per test."""

from __future__ import annotations

import importlib
import itertools
import sys
import textwrap
from pathlib import Path
from typing import Callable

import pytest

import gluon_hub

_counter = itertools.count()

#: A plugin module body with one model; ``{models}`` is a list of (name, task) pairs.
PLUGIN_TEMPLATE = '''
from gluon_hub import hookimpl, ModelSpec

GLUON_HUB_API = {api!r}

@hookimpl
def gluon_hub_models():
    return [ModelSpec(name=n, factory="tests_core_models:dense_net", task=t,
                      description="a tiny dense network") for n, t in {models!r}]
'''


@pytest.fixture(autouse=True)
def fresh_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> gluon_hub._hub.Hub:
    """Every test starts from a hub that has discovered nothing yet, with clean variables.

    ``GLUON_HUB_HOME`` points into the test's temp dir: a fetched remote index is cached
    there, never in the user's ``~/.cache``.
    """
    for var in ("GLUON_HUB_DISABLE_PLUGIN_AUTOLOAD", "GLUON_HUB_DISABLE_PLUGINS",
                "GLUON_HUB_STRICT_PLUGINS", "GLUON_HUB_INDEX", "GLUON_HUB_PREFER_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GLUON_HUB_HOME", str(tmp_path / "hub-home"))
    monkeypatch.syspath_prepend(str(Path(__file__).parent / "helpers"))
    hub = gluon_hub.reset_hub()
    yield hub
    gluon_hub.reset_hub()


@pytest.fixture
def fake_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., str]:
    """Install a fake distribution: a ``*.dist-info`` with ``entry_points.txt`` on sys.path.

    Returns the module name of the plugin, unique to the test, so that module caches of
    one test never leak into another.
    """
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    created: list[str] = []

    def make(
        plugin_name: str,
        body: str | None = None,
        *,
        models: list[tuple[str, str]] | None = None,
        api: str = ">=1,<2",
        distribution: str | None = None,
        requires: list[str] = ("gluon-hub~=0.1",),
    ) -> str:
        module = f"fake_plugin_{plugin_name.replace('-', '_')}_{next(_counter)}"
        distribution = distribution or f"fake-{plugin_name}"
        if body is None:
            body = PLUGIN_TEMPLATE.format(api=api, models=models or [(f"{plugin_name}_net", "demo")])
        (site / f"{module}.py").write_text(textwrap.dedent(body))
        info = site / f"{distribution.replace('-', '_')}-1.2.3.dist-info"
        info.mkdir()
        metadata = ["Metadata-Version: 2.1", f"Name: {distribution}", "Version: 1.2.3"]
        metadata += [f"Requires-Dist: {r}" for r in requires]
        (info / "METADATA").write_text("\n".join(metadata) + "\n")
        (info / "entry_points.txt").write_text(f"[gluon_hub]\n{plugin_name} = {module}\n")
        created.append(module)
        importlib.invalidate_caches()
        return module

    yield make
    for module in created:
        sys.modules.pop(module, None)


#: ``only_fakes`` disables the first-party plugins, which the hub (rightly) warns about
#: once per fresh hub; tests that check those warnings use ``pytest.warns``, which still sees them.
_DISABLED_WARNING = (
    "ignore:plugin .* is disabled by GLUON_HUB_DISABLE_PLUGINS:gluon_hub.errors.PluginWarning"
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "only_fakes" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.filterwarnings(_DISABLED_WARNING))


@pytest.fixture
def only_fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hide the first-party plugins so a test sees only the fakes it installs."""
    monkeypatch.setenv("GLUON_HUB_DISABLE_PLUGINS", "hub,cv,nlp,contrib,deploy")
