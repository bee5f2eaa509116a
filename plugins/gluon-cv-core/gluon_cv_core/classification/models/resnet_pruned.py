"""GluonCV 0.10's pruned ResNet V1b/V1d models (``resnet18_v1b_0.89``, ``resnet50_v1d_0.86`` ...).

Each is a ResNet V1b or V1d whose every convolution keeps only some of its output channels
(the suffix is the fraction of FLOPs kept, roughly). The widths are data, one entry per model
in ``classification/resnet_pruned_widths.json``; the layer structure, the parameter names and
their order are those of ResNet V1b/V1d, so GluonCV's files load unchanged.

GluonCV published these weights in MXNet's older format, keyed by full parameter names under
the prefix ``resnetv1d_``; :meth:`PrunedResNetV1b.load_parameters` reads that format as well
as ``save_parameters`` files.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any, Callable

from gluon_hub import head_argument
from gluon_hub.compat import mx

from ...common.backbones.resnetv1b import BlockV1b, ResNetV1bLayout
from ...common.blocks import BatchNorm, HybridBlock, check_choice, check_gluoncv_structure, make_norm, nn

__all__ = ["PrunedResNetV1b", "resnet_v1b_pruned", "pruned_configs"]

#: the prefix of every key in GluonCV's published pruned-ResNet files
_PUBLISHED_PREFIX = "resnetv1d_"


@lru_cache(maxsize=1)
def pruned_configs() -> dict[str, dict[str, Any]]:
    """Name -> ``{num_layers, variant, stem, stages}`` for every pruned model (the data file)."""
    data = json.loads(resources.files(__package__).joinpath("resnet_pruned_widths.json").read_text(encoding="utf-8"))
    return data["models"]


class PrunedResNetV1b(ResNetV1bLayout):
    """ResNet V1b (7x7 stem) or V1d (three 3x3 stem convolutions, average-pooled shortcuts)
    with per-convolution widths."""

    def __init__(self, stem: list[int], stages: list[dict[str, Any]], classes: int = 1000,
                 final_drop: float = 0.0, use_global_stats: bool = False,
                 norm_layer: Callable[..., HybridBlock] = BatchNorm, norm_kwargs: dict | None = None,
                 prefix: str | None = None, last_gamma: bool = False) -> None:
        super().__init__(prefix=prefix)
        norm_kwargs = dict(norm_kwargs or {})
        if use_global_stats:
            norm_kwargs["use_global_stats"] = True
        deep_stem = len(stem) == 3
        with self.name_scope():
            if deep_stem:
                # GluonCV's prefix 'conv1' has no scope: the stem layers are named in the net's
                self.conv1 = nn.HybridSequential(prefix="conv1")
                for i, channels in enumerate(stem):
                    self.conv1.add(nn.Conv2D(channels, 3, 2 if i == 0 else 1, 1, use_bias=False))
                    if i < 2:
                        self.conv1.add(make_norm(norm_layer, norm_kwargs, in_channels=channels))
                        self.conv1.add(nn.Activation("relu"))
            else:
                self.conv1 = nn.Conv2D(stem[0], 7, 2, 3, use_bias=False)
            self.bn1 = make_norm(norm_layer, norm_kwargs, in_channels=stem[-1])
            self.relu = nn.Activation("relu")
            self.maxpool = nn.MaxPool2D(pool_size=3, strides=2, padding=1)
            in_channels = stem[-1]
            for i, stage in enumerate(stages, 1):
                strides = 1 if i == 1 else 2
                downsample = None
                if stage["shortcut"] is not None:
                    downsample = nn.HybridSequential(prefix=f"down{i}_")
                    with downsample.name_scope():
                        if deep_stem:  # ResNet-D: average-pool, then an unstrided 1x1
                            downsample.add(nn.AvgPool2D(pool_size=strides, strides=strides,
                                                        ceil_mode=True, count_include_pad=False))
                        downsample.add(nn.Conv2D(stage["shortcut"], 1, 1 if deep_stem else strides,
                                                 use_bias=False))
                        downsample.add(make_norm(norm_layer, norm_kwargs, in_channels=stage["shortcut"]))
                layer = nn.HybridSequential(prefix=f"layers{i}_")
                with layer.name_scope():
                    for j, widths in enumerate(stage["blocks"]):
                        layer.add(BlockV1b(widths, strides if j == 0 else 1,
                                           downsample if j == 0 else None, norm_layer, norm_kwargs, last_gamma))
                setattr(self, f"layer{i}", layer)
                in_channels = stage["blocks"][0][-1]
            self._add_head(in_channels, classes, final_drop)

    def load_parameters(self, filename: str, ctx: Any = None, allow_missing: bool = False,
                        ignore_extra: bool = False, cast_dtype: bool = False,
                        dtype_source: str = "current") -> None:
        """Load a ``save_parameters`` file, or a file in GluonCV's published format for these
        models (full names under ``resnetv1d_``, whatever the depth)."""
        loaded = mx.nd.load(filename)
        legacy = isinstance(loaded, dict) and loaded and not any("." in key for key in loaded)
        if not legacy:
            super().load_parameters(filename, ctx, allow_missing, ignore_extra, cast_dtype, dtype_source)
            return
        renamed = {}
        for key, value in loaded.items():
            key = key.split(":", 1)[-1]  # 'arg:' / 'aux:' of symbol-style files
            if not key.startswith(_PUBLISHED_PREFIX):
                raise ValueError(f"{filename}: parameter {key!r} does not start with {_PUBLISHED_PREFIX!r}; "
                                 "expected GluonCV's pruned-ResNet format or a save_parameters file")
            renamed[key[len(_PUBLISHED_PREFIX):]] = value
        self.collect_params().load_dict(renamed, ctx, allow_missing, ignore_extra, self.prefix, filename,
                                        cast_dtype, dtype_source)


@head_argument("classes")
def resnet_v1b_pruned(config: str, classes: int = 1000, final_drop: float = 0.0,
                      use_global_stats: bool = False, norm_layer: Callable[..., HybridBlock] = BatchNorm,
                      norm_kwargs: dict | None = None, last_gamma: bool = False, deep_stem: bool | None = None,
                      avg_down: bool | None = None, stem_width: int | None = None,
                      dilated: bool | None = None) -> PrunedResNetV1b:
    """A pruned ResNet V1b/V1d by GluonCV name, for example ``"resnet50_v1d_0.86"``.

    Parameters
    ----------
    config : the model's name in ``resnet_pruned_widths.json``.
    classes : size of the classifier output.
    final_drop : dropout rate before the classifier.
    use_global_stats : freeze batch-norm statistics (fine-tuning with small batches).
    norm_layer, norm_kwargs : normalization class and its extra arguments.
    last_gamma : start each block's last norm scale at zero.
    deep_stem, avg_down, stem_width, dilated : GluonCV's keywords, accepted with this model's own
        values (its stem and strides are fixed by the pruned widths); others raise ValueError.

    Examples
    --------
    >>> net = resnet_v1b_pruned("resnet50_v1d_0.11", classes=10)
    >>> net.fc._in_units, net.fc._units
    (784, 10)
    """
    configs = pruned_configs()
    check_choice("config", config, configs)
    entry = configs[config]
    deep = len(entry["stem"]) == 3
    check_gluoncv_structure(config, {"deep_stem": deep_stem, "avg_down": avg_down, "stem_width": stem_width,
                                     "dilated": dilated},
                            {"deep_stem": deep, "avg_down": deep, "stem_width": 32, "dilated": False})
    return PrunedResNetV1b(entry["stem"], entry["stages"], classes, final_drop, use_global_stats,
                           norm_layer, norm_kwargs, prefix=f"resnetv1{entry['variant']}_", last_gamma=last_gamma)
