"""Build hook for the optional C tokenizer; all metadata lives in pyproject.toml.

``optional=True``: without a compiler the install still succeeds and the tokenizers run
their pure-Python tiers (same tokens, slower).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "gluon_nlp_core.text._wordpiece",
            sources=["gluon_nlp_core/text/_wordpiece.c"],
            optional=True,
        )
    ]
)
