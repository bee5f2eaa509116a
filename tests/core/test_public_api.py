"""The public surface: an explicit __all__, and listing that stays light."""

from __future__ import annotations

import subprocess
import sys

import gluon_hub

PUBLIC = {
    "AmbiguousNameError", "BatchifySpec", "CommandSpec", "DatasetSpec", "FileRef",
    "HUB_API_VERSION", "HubError", "IndexFormatError", "InputSpec", "LossSpec", "Metric",
    "ModelBuildError", "ModelSpec", "PluginError", "PluginInfo", "PluginNotInstalledError",
    "PluginWarning", "UnknownNameError", "MissingDistributionError",
    "WeightVariant", "__version__", "dataset_info", "get_batchify", "get_loss", "hookimpl",
    "info", "list_batchify", "list_datasets", "list_losses", "list_models", "load",
    "load_dataset", "plugins", "register_plugin", "reset_hub", "search", "set_index",
    "unregister_plugin", "cache", "fetch", "publish", "export", "optimize", "quantize", "OptimizeWarning",
    "NewHead", "NewHeadWarning", "head_argument", "input_spec",
    "EmbeddingSpec", "list_embeddings", "embedding_info", "load_embedding",
    "VocabularySpec", "list_vocabularies", "vocabulary_info", "load_vocabulary",
}


def test_all_is_explicit_and_complete():
    assert PUBLIC == set(gluon_hub.__all__)
    for name in gluon_hub.__all__:
        assert hasattr(gluon_hub, name), name
    assert len(gluon_hub.__all__) == len(set(gluon_hub.__all__))


def test_listing_never_imports_mxnet_or_model_code():
    code = (
        "import sys, gluon_hub\n"
        "names = gluon_hub.list_models()\n"
        "gluon_hub.list_datasets(); gluon_hub.list_losses(); gluon_hub.list_embeddings(); gluon_hub.plugins()\n"
        "gluon_hub.search('resnet')\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('mxnet', 'gluoncv', 'gluonnlp', 'numpy', 'requests', 'filelock', 'tqdm', 'PIL')]\n"
        "models = [m for m in sys.modules if '.models' in m]\n"
        "print(len(names), heavy, models)\n"
        "assert not heavy and not models, (heavy, models)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr + result.stdout


#: Run in a fresh interpreter: records who first asks for mxnet, then imports every module that
#: must work without MXNet (Python 3.13, numpy 2): the core, the runtime, every installed plugin's
#: entry point and the spec modules its hooks import, the class-name and ONNX runner modules the
#: specs point to (``gluon_hub.runtime.load`` imports them), and the text plugin's tokenizers and vocabularies.
MXNET_FREE_IMPORTS = """
import importlib, importlib.metadata, pkgutil, sys, traceback

class Watch:
    stack = None
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.split(".")[0] == "mxnet" and cls.stack is None:
            cls.stack = "".join(traceback.format_stack(limit=25)[:-1])
        return None

sys.meta_path.insert(0, Watch)
import gluon_hub, gluon_hub.runtime, gluon_hub.cache, gluon_hub.publishing, gluon_hub.cli, gluon_hub.specs
hub = gluon_hub._hub.get_hub()
entry_points = [ep.value for ep in importlib.metadata.entry_points(group="gluon_hub")]
for kind in hub.manager.HOOK_KINDS:
    hub.catalog(kind)
failed = [(p.name, p.error) for p in gluon_hub.plugins() if p.status != "loaded"]
labels = set()
for name in gluon_hub.list_models():
    spec = gluon_hub.info(name)
    if spec.input is not None and spec.input.labels:
        labels.add(spec.input.labels.partition(":")[0])
    if spec.runner:
        labels.add(spec.runner.partition(":")[0])
for module in sorted(labels):
    importlib.import_module(module)
import gluon_nlp_core.text
text = [m.name for m in pkgutil.walk_packages(gluon_nlp_core.text.__path__, "gluon_nlp_core.text.")]
for module in text:
    importlib.import_module(module)
print(len(entry_points), len(labels), len(text), failed)
print("mxnet imported by:\\n" + Watch.stack if Watch.stack else "no mxnet")
"""


def test_core_specs_runtime_and_tokenizers_never_import_mxnet():
    """What the MXNet-free hub (Python 3.13, numpy 2) runs must not need MXNet at any depth."""
    result = subprocess.run([sys.executable, "-c", MXNET_FREE_IMPORTS], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    counts, verdict = result.stdout.split("\n", 1)
    entry_points, labels, text, failed = counts.split(" ", 3)
    # the four first-party plugins and the hub's own, a labels module per vision task at least,
    # the tokenizers: so that the check cannot pass on nothing
    assert int(entry_points) >= 5 and int(labels) >= 3 and int(text) >= 5, counts
    assert failed == "[]", counts
    assert verdict.strip() == "no mxnet", verdict
