"""Deploying a hub model to C++, Java or Clojure through MXNet's C predict API.

:func:`deploy` exports a model (symbol + params) and writes a self-contained project around
it: a small program in the chosen language that calls ``MXPredCreate``, ``MXPredSetInput``,
``MXPredForward`` and ``MXPredGetOutput`` from the ``libmxnet.so`` of the ``mxnet`` wheel,
with ``build.sh`` and ``run``. The project needs no Python at run time; the model's
preprocessing (resize, centre crop, mean/std) is written into it and done by the program.
See ``docs/deploy.md``.
"""

from __future__ import annotations

from ._project import LANGUAGES, deploy, mxnet_library_dir

__all__ = ["LANGUAGES", "deploy", "mxnet_library_dir"]
