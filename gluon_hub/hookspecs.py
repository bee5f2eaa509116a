"""The plugin contract: a few plural hooks, each returning small frozen specs.

A plugin is a module (or object) that implements some of these hooks with
:data:`hookimpl` and sets ``GLUON_HUB_API`` to the range of hub API versions it supports::

    from gluon_hub import hookimpl, ModelSpec

    GLUON_HUB_API = ">=1,<2"

    @hookimpl
    def gluon_hub_models():
        return [ModelSpec(name="tiny_mlp", factory="my_plugin.models:tiny_mlp", task="demo")]

It is published under the entry-point group ``gluon_hub``; the entry-point name is the
plugin's name, used to qualify its names (``my/tiny_mlp``). Hooks are called lazily, on
the first listing or lookup, and must not import heavy code such as mxnet.
"""

from __future__ import annotations

from typing import Iterable

import pluggy

from .specs import BatchifySpec, CommandSpec, DatasetSpec, EmbeddingSpec, LossSpec, ModelSpec, VocabularySpec

PROJECT = "gluon_hub"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def gluon_hub_models() -> Iterable[ModelSpec]:
    """Models this plugin provides."""


@hookspec
def gluon_hub_datasets() -> Iterable[DatasetSpec]:
    """Datasets this plugin provides."""


@hookspec
def gluon_hub_embeddings() -> Iterable[EmbeddingSpec]:
    """Pretrained word embeddings this plugin provides (hub API 1.1)."""


@hookspec
def gluon_hub_vocabularies() -> Iterable[VocabularySpec]:
    """Pretrained vocabularies and tokenizer files this plugin provides (hub API 1.2)."""


@hookspec
def gluon_hub_losses() -> Iterable[LossSpec]:
    """Losses this plugin provides."""


@hookspec
def gluon_hub_batchify() -> Iterable[BatchifySpec]:
    """Batchify functions this plugin provides."""


@hookspec
def gluon_hub_commands() -> Iterable[CommandSpec]:
    """``gluon-hub`` subcommands this plugin adds (``predict``, ``train`` ...)."""


#: Hook name for each spec kind, keyed as in ``registry.json``.
HOOK_FOR_KIND = {
    "models": "gluon_hub_models",
    "datasets": "gluon_hub_datasets",
    "embeddings": "gluon_hub_embeddings",
    "vocabularies": "gluon_hub_vocabularies",
    "losses": "gluon_hub_losses",
    "batchify": "gluon_hub_batchify",
    "commands": "gluon_hub_commands",
}
