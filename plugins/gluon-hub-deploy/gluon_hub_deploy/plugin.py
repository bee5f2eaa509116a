"""Entry point of the gluon-hub-deploy plugin: the ``deploy``, ``convert``, ``portability`` and
``bench`` commands; imports no mxnet.

The library functions (``export``, ``optimize``, ``quantize``) need no hook: the hub's
names for them import this distribution when first used.
"""

from __future__ import annotations

from gluon_hub import CommandSpec, hookimpl

GLUON_HUB_API = ">=1,<2"


@hookimpl
def gluon_hub_commands():
    return [
        CommandSpec(
            name="deploy",
            factory="gluon_hub_deploy.cli:main",
            description="write a C++/Java/Clojure project that runs a model without Python: "
                        "gluon-hub deploy NAME --lang LANG -o DIR",
        ),
        CommandSpec(
            name="convert",
            factory="gluon_hub_deploy.cli:convert_main",
            description="convert models' weights to ONNX or safetensors files named by their hash, "
                        "with a weights index: gluon-hub convert NAME... --pretrained -o DIR",
        ),
        CommandSpec(
            name="portability",
            factory="gluon_hub_deploy.portability_cli:main",
            description="measure whether models export to ONNX with MXNet's outputs, the rows of "
                        "the portability matrix: gluon-hub portability [NAME...] [--write]",
        ),
        CommandSpec(
            name="bench",
            factory="gluon_hub_deploy.bench.cli:main",
            description="measure latency, throughput and peak memory on this machine (cached, resumable) "
                        "and chart them against reported accuracy: gluon-hub bench NAME... [--runtime "
                        "mxnet,onnx] [--batch 1,8] [-o FILE.csv] [--chart FILE.html]",
        ),
    ]
