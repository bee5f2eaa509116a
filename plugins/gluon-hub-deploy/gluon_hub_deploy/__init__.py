"""gluon-hub-deploy: turn a hub model into something that runs elsewhere.

Graph export (MXNet symbol + params, ONNX), oneDNN fusion for CPU inference (``optimize``),
int8 quantization (``quantize``) and ``deploy``, which writes a C++, Java or Clojure project
around MXNet's C predict API. The hub re-exports the first three as ``gluon_hub.export``,
``gluon_hub.optimize`` and ``gluon_hub.quantize``; ``gluon-hub deploy`` arrives through the
plugin hook. Importing this package imports no mxnet; each function imports it when called.
"""

from __future__ import annotations

from ._convert import convert
from ._export import OnnxExportError, export
from ._optimize import example_inputs, fused_operators, optimize
from ._project import LANGUAGES, deploy, mxnet_library_dir
from ._quantize import calibration_layers, int8_model, int8_operators, quantize

__version__ = "0.1.0"

__all__ = [
    "LANGUAGES",
    "OnnxExportError",
    "__version__",
    "calibration_layers",
    "convert",
    "deploy",
    "example_inputs",
    "export",
    "fused_operators",
    "int8_model",
    "int8_operators",
    "mxnet_library_dir",
    "optimize",
    "quantize",
]
