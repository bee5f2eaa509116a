"""Import MXNet, checked, on a modern numpy.

gluon-hub does not install MXNet itself: the CPU build comes with its ``[mxnet]`` extra
(``pip install mxnet==1.9.1``), and a CUDA build (``mxnet-cu112`` ...) provides the same ``mxnet``
module. Importing this module checks that some MXNet >= 1.9.1 is importable and says
what to install when it is not, or, on Python 3.13 (which MXNet has no wheel for), what runs
without it: everything that builds, trains or exports a model imports MXNet through here, so
this is the one place that says so::

    from gluon_hub.compat import mx

MXNet 1.9.1 still uses numpy aliases removed in numpy 1.24 (``np.bool``, ``np.int`` ...);
they are restored before ``import mxnet``, here and (for a plain ``import mxnet``) by the
``.pth`` file installed with gluon-hub.
"""

from __future__ import annotations

import sys

from ._numpy_aliases import restore_numpy_aliases

#: The oldest MXNet the hub runs on.
MIN_MXNET = "1.9.1"

_INSTALL = (
    'install the CPU build with pip install "mxnet==1.9.1" (what the [mxnet] extra of gluon-hub adds), '
    "or a CUDA build that matches your CUDA, such as pip install mxnet-cu112==1.9.1 "
    "(mxnet-cu110, mxnet-cu112 ...; the GPU builds provide the same mxnet module)"
)


def check_mxnet_version(version: str, location: str = "mxnet") -> None:
    """Raise ``ImportError`` when ``version`` is older than :data:`MIN_MXNET`, or from the 2.0
    line, whose Gluon has no ``hybrid_forward`` (the hub's models would fail at their first call)."""
    from packaging.version import InvalidVersion, Version

    try:
        parsed = Version(version)
    except InvalidVersion:
        parsed = None
    if parsed is None or parsed < Version(MIN_MXNET):
        raise ImportError(
            f"gluon_hub needs MXNet >= {MIN_MXNET}, but the mxnet module at {location} is "
            f"version {version}; {_INSTALL}"
        )
    if parsed.major >= 2:
        raise ImportError(
            f"gluon_hub runs on MXNet 1.9 and the mxnet module at {location} is version {version}: the hub's "
            "models are written against MXNet 1.9.1's Gluon (HybridBlock.hybrid_forward), which the Gluon of "
            f"MXNet 2.0 and its forks dropped. {_INSTALL[0].upper()}{_INSTALL[1:]} (Python 3.10-3.12), or, "
            f"{WITHOUT_MXNET}"
        )


#: What the MXNet-free hub offers instead, where MXNet cannot be installed.
WITHOUT_MXNET = (
    "without MXNet, run a model exported to ONNX with onnxruntime: gluon-hub predict NAME IMAGE "
    "--runtime onnx --model-file NAME.onnx, or gluon_hub.runtime.load_onnx(\"NAME.onnx\", \"NAME\") "
    "(pip install \"gluon-hub[onnxruntime]\"), after exporting the model where MXNet runs (Python "
    "3.10-3.12) with gluon_hub.export(\"NAME\", \"NAME.onnx\", format=\"onnx\")"
)


def missing_mxnet_message(version_info: tuple[int, ...] = sys.version_info[:2]) -> str:
    """Why there is no mxnet module and what to do: on Python 3.13+, MXNet cannot be installed."""
    if tuple(version_info[:2]) >= (3, 13):
        python = "%d.%d" % tuple(version_info[:2])
        return (f"gluon_hub needs MXNet >= {MIN_MXNET} to build, train or export models, and MXNet has no "
                f"wheel for Python {python} (1.9.1 is published for Python 3.10-3.12, with numpy < 2); "
                f"{WITHOUT_MXNET}; or use Python "
                f"3.10-3.12 and pip install \"gluon-hub[mxnet]\"")
    return (f"gluon_hub needs MXNet >= {MIN_MXNET} to build, train or export models, and no mxnet module is "
            f"installed; {_INSTALL}; or, {WITHOUT_MXNET}")


restore_numpy_aliases()

try:
    import mxnet as mx  # noqa: E402  (must follow the alias restoration)
except ImportError as _exc:
    if _exc.name != "mxnet":
        raise  # MXNet is there but broken (a missing libquadmath ...): its own error says why
    raise ImportError(missing_mxnet_message(), name="mxnet") from None

check_mxnet_version(getattr(mx, "__version__", "unknown"), getattr(mx, "__file__", None) or "mxnet")

__all__ = ["MIN_MXNET", "WITHOUT_MXNET", "check_mxnet_version", "missing_mxnet_message", "mx",
           "restore_numpy_aliases"]
