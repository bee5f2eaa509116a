"""The hub's names for the tools of gluon-hub-deploy, a distribution that may be absent.

``gluon_hub.export``, ``optimize``, ``quantize`` and ``load(..., optimize=True)`` come from
it; without it they raise :class:`MissingDistributionError` with the command that installs
it. A model whose factory lives in a first-party distribution that is not installed (the int8
names of gluon-cv-core need gluon-hub-deploy) gets the same hint from :func:`import_factory`,
which ``load`` calls where the name is known.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Callable

from ._factory import import_object
from .errors import MissingDistributionError, PluginError

DEPLOY = "gluon-hub-deploy"
#: Public names of the hub that gluon-hub-deploy provides.
TOOLS = ("export", "optimize", "quantize")


def not_installed(distribution: str, what: str) -> MissingDistributionError:
    """The error for ``what``, which needs ``distribution``: the command that installs it."""
    from ._index import install_command

    return MissingDistributionError(f"{what} needs the {distribution} distribution, which is not "
                                    f"installed; run: {install_command(distribution)}")


def missing_package(exc: ModuleNotFoundError) -> str | None:
    """The first-party distribution whose top-level package ``exc`` did not find, or None.

    Only the package itself counts: a missing module inside an installed package is that
    package's bug, not a missing distribution.
    """
    from ._index import FIRST_PARTY

    for distribution in FIRST_PARTY:
        if exc.name == distribution.replace("-", "_"):
            return distribution
    return None


def import_factory(path: str, owner: str) -> Any:
    """:func:`import_object`, or the install hint where ``path`` is in a first-party
    distribution that is not installed; ``owner`` names the spec in both errors."""
    try:
        return import_object(path, owner)
    except PluginError as exc:
        cause = exc.__cause__
        distribution = missing_package(cause) if isinstance(cause, ModuleNotFoundError) else None
        if distribution is None:
            raise
        raise not_installed(distribution, owner) from None


def deploy_package(what: str) -> ModuleType:
    """``gluon_hub_deploy``, imported; ``what`` names the caller in the install hint."""
    try:
        return importlib.import_module("gluon_hub_deploy")
    except ModuleNotFoundError as exc:
        if exc.name != "gluon_hub_deploy":
            raise
        raise not_installed(DEPLOY, what) from None


def tool(name: str) -> Callable[..., Any]:
    """``gluon_hub_deploy.<name>``; without the distribution, a function of that name that
    raises the install hint when called (so that ``from gluon_hub import *`` still works)."""
    try:
        return getattr(deploy_package(f"gluon_hub.{name}"), name)
    except MissingDistributionError as exc:
        message = str(exc)

    def unavailable(*args: Any, **kwargs: Any) -> Any:
        raise MissingDistributionError(message)

    unavailable.__name__ = unavailable.__qualname__ = name
    unavailable.__doc__ = f"Unavailable here: {message}"
    return unavailable
