"""Every ``"module:attr"`` string that an installed plugin's specs name imports.

Specs name their factories (models, datasets, losses, batchify functions, commands) and
their models' class names (``InputSpec.labels``) and export graphs
(``ModelSpec.export_graphs``) as strings, imported on first use: a module
moved without its spec following would otherwise fail only when someone loads that one name.
This test imports them all, on every Python the suite runs on (a few seconds: one import of
each plugin's modules), through the conformance kit's ``check_specs(import_factories=True)``,
which also checks that each factory accepts its spec's ``kwargs``.
"""

from __future__ import annotations

from typing import Any

import gluon_hub
from gluon_hub.testing import ERROR, check_specs

IMPORT_CHECKS = ("factory", "labels", "export_graphs")


def registered_specs(hub: Any) -> list[Any]:
    """Every spec of every kind the installed plugins register."""
    specs: list[Any] = []
    for kind in hub.manager.HOOK_KINDS:
        hub.catalog(kind)  # discovers the plugins and calls their hooks
        specs += hub.manager.specs(kind)
    return specs


def import_errors(specs: list[Any]) -> list[str]:
    return [str(f) for f in check_specs(specs, import_factories=True)
            if f.severity == ERROR and f.check in IMPORT_CHECKS]


def test_every_factory_and_labels_string_of_the_installed_plugins_imports(fresh_hub: Any) -> None:
    specs = registered_specs(fresh_hub)
    not_loaded = [f"{p.name} ({p.distribution}): {p.status}: {p.error}" for p in gluon_hub.plugins()
                  if p.status != "loaded"]
    assert not not_loaded, "plugins whose strings could not be checked:\n" + "\n".join(not_loaded)
    # the hub's own batchify functions at least, so that the check cannot pass on nothing
    assert any(s.kind == "batchify" and s.plugin == "hub" for s in specs), specs
    errors = import_errors(specs)
    assert not errors, f"{len(errors)} spec string(s) do not import:\n" + "\n".join(errors)


MOVED = '''
from gluon_hub import hookimpl, DatasetSpec, InputSpec, LossSpec, ModelSpec

GLUON_HUB_API = ">=1,<2"

@hookimpl
def gluon_hub_models():
    return [
        ModelSpec(name="fine_net", factory="tests_core_models:dense_net", description="d",
                  input=InputSpec(shape=(4,), num_classes=3, labels="tests_core_labels:LABELS")),
        ModelSpec(name="moved_net", factory="tests_core_gone.models:dense_net", description="d"),
        ModelSpec(name="renamed_net", factory="tests_core_models:old_dense_net", description="d"),
        ModelSpec(name="stale_labels_net", factory="tests_core_models:dense_net", description="d",
                  input=InputSpec(shape=(4,), num_classes=3, labels="tests_core_gone.classes:NAMES")),
        ModelSpec(name="short_labels_net", factory="tests_core_models:dense_net", description="d",
                  input=InputSpec(shape=(4,), num_classes=5, labels="tests_core_labels:LABELS")),
        ModelSpec(name="count_labels_net", factory="tests_core_models:dense_net", description="d",
                  input=InputSpec(shape=(4,), num_classes=3, labels="tests_core_labels:COUNT")),
        ModelSpec(name="stale_graphs_net", factory="tests_core_models:dense_net", description="d",
                  export_graphs="tests_core_gone.export:graphs"),
    ]

@hookimpl
def gluon_hub_datasets():
    return [DatasetSpec(name="moved_data", factory="tests_core_gone.data:Digits", description="d")]

@hookimpl
def gluon_hub_losses():
    return [LossSpec(name="renamed_loss", factory="tests_core_models:OldLoss", description="d")]
'''


def test_a_string_that_no_longer_imports_is_reported_with_its_spec_and_the_string(
    fresh_hub: Any, fake_dist: Any, only_fakes: None, tmp_path: Any
) -> None:
    # beside the fake distribution, on the sys.path that fake_dist set up
    (tmp_path / "site" / "tests_core_labels.py").write_text("LABELS = ('cat', 'dog', 'fish')\nCOUNT = 3\n")
    fake_dist("movers", body=MOVED)
    specs = registered_specs(fresh_hub)
    errors = import_errors(specs)
    by_spec = {e.split(" [")[0].split(None, 1)[1]: e for e in errors}
    assert set(by_spec) == {"model 'movers/moved_net'", "model 'movers/renamed_net'",
                            "model 'movers/stale_labels_net'", "model 'movers/short_labels_net'",
                            "model 'movers/count_labels_net'", "model 'movers/stale_graphs_net'",
                            "dataset 'movers/moved_data'", "loss 'movers/renamed_loss'"}, errors
    assert "'tests_core_gone.models:dense_net'" in by_spec["model 'movers/moved_net'"]
    assert "cannot import 'tests_core_gone.models'" in by_spec["model 'movers/moved_net'"]
    assert "'tests_core_models' has no attribute 'old_dense_net'" in by_spec["model 'movers/renamed_net'"]
    assert "[labels]" in by_spec["model 'movers/stale_labels_net'"]
    assert "'tests_core_gone.classes:NAMES'" in by_spec["model 'movers/stale_labels_net'"]
    assert "has 3 names but the input declares num_classes=5" in by_spec["model 'movers/short_labels_net'"]
    assert "[export_graphs]" in by_spec["model 'movers/stale_graphs_net'"]
    assert "'tests_core_gone.data:Digits'" in by_spec["dataset 'movers/moved_data'"]
    assert "'tests_core_models' has no attribute 'OldLoss'" in by_spec["loss 'movers/renamed_loss'"]
    assert "labels 'tests_core_labels:COUNT' is a int, not a sequence" in by_spec["model 'movers/count_labels_net'"]
    # without importing (check-plugin --no-build), the modules that are gone are still found out
    located = {f.subject for f in check_specs(specs, import_factories=False)
               if f.severity == ERROR and f.check in IMPORT_CHECKS}
    assert located == {"model 'movers/moved_net'", "model 'movers/stale_labels_net'",
                       "model 'movers/stale_graphs_net'", "dataset 'movers/moved_data'"}
