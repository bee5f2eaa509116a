"""Entry point of the gluon-nlp-core plugin: declares specs, imports no model code or mxnet."""

from __future__ import annotations

from gluon_hub import CommandSpec, hookimpl

GLUON_HUB_API = ">=1.2,<2"  # 1.1: gluon_hub_embeddings; 1.2: gluon_hub_vocabularies


@hookimpl
def gluon_hub_models():
    from ._model_specs import model_specs

    return model_specs()


@hookimpl
def gluon_hub_datasets():
    from ._data_specs import dataset_specs

    return dataset_specs()


@hookimpl
def gluon_hub_embeddings():
    from ._embedding_specs import embedding_specs

    return embedding_specs()


@hookimpl
def gluon_hub_vocabularies():
    from ._vocabulary_specs import vocabulary_specs

    return vocabulary_specs()


@hookimpl
def gluon_hub_commands():
    # Not "translate": gluon-contrib's CycleGAN image command already has that name.
    return [
        CommandSpec(
            name="translate-text",
            factory="gluon_nlp_core.translate:main",
            description="translate BPE-tokenized sentences with a Transformer by beam search: "
            "gluon-hub translate-text MODEL [SENTENCE...]",
        )
    ]
