"""Published weights into a model with another class count: keep every parameter but the head.

A factory marks the argument that sizes its class-dependent layers with :func:`head_argument`
(``classes``, ``nclass``, ``num_joints`` ...). When ``load(name, pretrained=..., <argument>=...)``
asks for another value than the published weights were trained with, the hub loads every
parameter of the file whose shape fits and leaves the others at their initialisation, but
only those whose shape differs exactly where the class count does: any other misfit stays
the error it is without the argument. A plugin may instead give ``transfer``, which adapts a
model loaded with its published head (detectors keep the rows of classes that keep their name).

What was left out is warned about (:class:`~gluon_hub.errors.NewHeadWarning`) and recorded on
the returned block as ``net.gluon_hub_new_head`` (a :class:`NewHead`).

This module imports nothing heavy: plugins import :func:`head_argument` beside their factories.
"""

from __future__ import annotations

import inspect
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

__all__ = ["NewHead", "head_argument"]

_F = TypeVar("_F", bound=Callable[..., Any])
#: the attribute :func:`head_argument` sets on a factory
_MARK = "gluon_hub_head"
#: the attribute ``load`` sets on a block whose head it re-created
REPORT = "gluon_hub_new_head"


@dataclass(frozen=True)
class _Head:
    argument: str
    count: Callable[[Any], int] | None
    transfer: Callable[[Any, Any], tuple[Sequence[str], Sequence[str]]] | None


@dataclass(frozen=True)
class NewHead:
    """What ``load`` did to fit published weights to another class count.

    ``reinitialized`` names the parameters (as ``load_parameters`` keys them) that start
    from their initializer instead of the file; ``kept`` the classes whose rows came from
    the file although the head was re-created (detectors keep the classes that keep their name).
    """

    argument: str
    published: Any
    requested: Any
    reinitialized: tuple[str, ...]
    kept: tuple[str, ...] = ()

    def __str__(self) -> str:
        names = ", ".join(self.reinitialized) or "none"
        kept = f"; rows kept for the classes {', '.join(self.kept)}" if self.kept else ""
        return (f"{self.argument}={_short(self.requested)} differs from the published "
                f"{_short(self.published)}: parameters left at their initialisation: {names}{kept}")


def _short(value: Any) -> str:
    if isinstance(value, (list, tuple)) and len(value) > 6:
        return f"[{', '.join(map(repr, value[:5]))}, ... ({len(value)} names)]"
    return repr(list(value) if isinstance(value, tuple) else value)


def head_argument(argument: str, count: Callable[[Any], int] | None = None,
                  transfer: Callable[[Any, Any], tuple[Sequence[str], Sequence[str]]] | None = None
                  ) -> Callable[[_F], _F]:
    """Mark a model factory whose class-dependent layers are sized by its argument ``argument``.

    ``count`` turns a value of the argument into the class count where it is not an int (a
    list of names, a dataset key). ``transfer(net, value)`` replaces the generic rule: it gets
    the model built and loaded with the published value and changes it to ``value``, returning
    the parameters it re-created and the classes whose rows it kept.

    Examples
    --------
    >>> @head_argument("classes")
    ... def tiny(classes: int = 10): ...
    >>> tiny.gluon_hub_head.argument
    'classes'
    """
    def mark(factory: _F) -> _F:
        setattr(factory, _MARK, _Head(argument, count, transfer))
        return factory
    return mark


@dataclass(frozen=True)
class Change:
    """A load that asks for another class count than the published weights have."""

    head: _Head
    published: Any
    requested: Any


def change(factory: Any, defaults: Mapping[str, Any], kwargs: dict[str, Any]) -> Change | None:
    """The class-count change ``kwargs`` ask of published weights built with ``defaults``, or None."""
    head = getattr(factory, _MARK, None)
    if not isinstance(head, _Head) or head.argument not in kwargs:
        return None
    if head.argument in defaults:
        published = defaults[head.argument]
    else:
        published = inspect.signature(factory).parameters[head.argument].default
    requested = kwargs[head.argument]
    if requested == published or published is inspect.Parameter.empty:
        return None
    return Change(head, published, requested)


def build_kwargs(found: Change, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Factory arguments for the model the file is loaded into: a ``transfer`` adapts the
    published head after loading, so the model is first built with it."""
    return {**kwargs, found.head.argument: found.published} if found.head.transfer else kwargs


def fit(net: Any, path: Any, ctx: Any, found: Change) -> Any:
    """Load ``path`` into ``net`` leaving out the head; record and warn what was left out."""
    from .errors import NewHeadWarning

    if found.head.transfer is not None:
        net.load_parameters(str(path), ctx=ctx)
        created, kept = found.head.transfer(net, found.requested)
    else:
        created, kept = _load_fitting(net, path, ctx, found), ()
    report = NewHead(found.head.argument, found.published, found.requested, tuple(created), tuple(kept))
    setattr(net, REPORT, report)
    if report.reinitialized:
        warnings.warn(str(report), NewHeadWarning, stacklevel=3)
    return net


def _count(found: Change, value: Any) -> int | None:
    if found.head.count is not None:
        return found.head.count(value)
    return value if isinstance(value, int) else None


def _load_fitting(net: Any, path: Any, ctx: Any, found: Change) -> list[str]:
    """Every parameter of the file whose shape fits; those that differ only where the class
    count does are left as initialised and returned; any other misfit is refused."""
    from .compat import mx

    old, new = _count(found, found.published), _count(found, found.requested)
    saved = mx.nd.load(str(path))
    if not isinstance(saved, dict):
        raise ValueError(f"{path} holds no named parameters")
    left_out: list[str] = []
    refused: list[str] = []
    unshaped: list[tuple[Any, tuple[int, ...]]] = []  # new heads whose input size the file tells
    for key, param, value in file_entries(net, saved):
        if param is None or not param.shape:
            continue  # MXNet names an extra entry itself, below
        expected, found_shape = tuple(param.shape), tuple(value.shape)
        if shape_fits(expected, found_shape):
            continue
        by_count = len(expected) == len(found_shape) and old is not None and all(
            e in (0, -1, f) or (f == old and e == new) for e, f in zip(expected, found_shape))
        if by_count:
            left_out.append(key)
            if any(e in (0, -1) for e in expected):
                unshaped.append((param, tuple(f if e in (0, -1) else e for e, f in zip(expected, found_shape))))
        else:
            refused.append(f"parameter {key!r} expects shape {expected} but the file has {found_shape}")
    if refused:
        raise ValueError(f"{'; '.join(refused)} (not a difference in {found.head.argument} alone)")
    covered = {id(p) for _, p, _ in file_entries(net, saved) if p is not None}
    missing = [k for k, p in net._collect_params_with_prefix().items() if id(p) not in covered]
    if missing:
        raise ValueError(f"the file has no parameters {', '.join(missing[:5])}"
                         f"{' ...' if len(missing) > 5 else ''}")
    with tempfile.TemporaryDirectory() as folder:  # MXNet 1.9 loads parameters from files only
        kept = Path(folder) / "kept.params"
        mx.nd.save(str(kept), {k: v for k, v in saved.items() if k not in left_out})
        net.load_parameters(str(kept), ctx=ctx, allow_missing=True)
    for param, shape in unshaped:  # initialised now, not at the first forward: the model saves at once
        param.shape = shape
        param.initialize(ctx=ctx, force_reinit=True)
    return left_out


def shape_fits(expected: tuple[int, ...], found: tuple[int, ...]) -> bool:
    """Whether a saved array of shape ``found`` fits a parameter of shape ``expected``, whose
    sizes not yet inferred are 0 or -1."""
    return len(expected) == len(found) and all(e in (0, -1, f) for e, f in zip(expected, found))


def file_entries(net: Any, saved: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """``(file key, parameter or None, value)`` per entry; files keyed by full parameter names
    (MXNet's legacy format) as well as by ``load_parameters``' structural keys."""
    if any("." in key for key in saved):
        params = net._collect_params_with_prefix()
        return [(key, params.get(key), value) for key, value in saved.items()]
    by_name = {p.name: p for p in net.collect_params().values()}
    rows = []
    for key, value in saved.items():
        bare = key[4:] if key.startswith(("arg:", "aux:")) else key
        rows.append((key, by_name.get(bare, by_name.get(getattr(net, "prefix", "") + bare)), value))
    return rows
