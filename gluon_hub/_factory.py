"""Turning a spec's ``"module:attr"`` factory into an object and calling it safely."""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Callable, Mapping

from .errors import PluginError


def import_object(path: str, owner: str) -> Any:
    """Import ``"package.module:attr.sub"``; errors name the spec that pointed there."""
    module_name, _, attr_path = path.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise PluginError(f"{owner}: cannot import {module_name!r} ({type(exc).__name__}: {exc})") from exc
    for attr in attr_path.split("."):
        try:
            obj = getattr(obj, attr)
        except AttributeError:
            raise PluginError(f"{owner}: {module_name!r} has no attribute {attr_path!r}") from None
    return obj


def check_kwargs(factory: Callable[..., Any], owner: str, given: Mapping[str, Any]) -> None:
    """Refuse keywords ``factory`` does not accept, naming the accepted ones."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # builtins and some C extensions have no signature
        return
    if not params or any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    accepted = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    unknown = sorted(set(given) - set(accepted))
    if unknown:
        raise TypeError(
            f"{owner} got unexpected keyword argument(s) {', '.join(map(repr, unknown))}; "
            f"accepted: {', '.join(accepted) or 'none'}"
        )


def call_with_checked_kwargs(
    factory: Callable[..., Any], owner: str, defaults: Mapping[str, Any], given: Mapping[str, Any]
) -> Any:
    """Call ``factory(**defaults, **given)``; an unknown keyword names the accepted ones."""
    check_kwargs(factory, owner, given)
    return factory(**{**defaults, **given})
