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
        "gluon_hub.list_datasets(); gluon_hub.list_losses(); gluon_hub.plugins()\n"
        "gluon_hub.search('resnet')\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('mxnet', 'gluoncv', 'gluonnlp', 'numpy', 'requests', 'filelock', 'tqdm', 'PIL')]\n"
        "models = [m for m in sys.modules if '.models' in m]\n"
        "print(len(names), heavy, models)\n"
        "assert not heavy and not models, (heavy, models)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr + result.stdout
