"""Versions of the distribution and of the plugin API it offers."""

__version__ = "0.1.0"

#: Version of the plugin contract (hookspecs and spec dataclasses). Plugins declare the
#: range they support with ``GLUON_HUB_API`` (a PEP 440 specifier such as ``">=1,<2"``).
HUB_API_VERSION = "1.2"  # 1.1: the gluon_hub_embeddings hook; 1.2: gluon_hub_vocabularies
