"""Starting an action recogniser from GluonCV's published Kinetics-400 weights.

GluonCV's fine-tuning constructors (``*_custom`` with ``use_kinetics_pretrain=True``) copy
every parameter of a published Kinetics-400 model into the new network but its classifier,
which keeps its fresh initialisation for the new classes. The families here do the same
through :func:`start_from_kinetics`.
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["copy_parameters", "start_from_kinetics"]


def copy_parameters(net: Any, source: Any, skip: Sequence[str]) -> None:
    """Set every parameter of ``net`` whose structural name (``layer1.0.conv1.weight``) does not
    start with one of ``skip`` to the value of ``source``'s parameter of that name.

    ``net`` is initialised first, so the parameters ``skip`` keeps have their initial values.
    A parameter ``source`` lacks, or has in another shape, is an error naming it.
    """
    values = source._collect_params_with_prefix()
    targets = {key: param for key, param in net._collect_params_with_prefix().items()
               if not key.startswith(tuple(skip))}
    missing = sorted(set(targets) - set(values))
    if missing:
        raise ValueError(f"the source network has no parameter {missing[0]!r} ({len(missing)} missing): "
                         "the two structures differ")
    net.initialize()
    for key, param in targets.items():
        value = values[key].data()
        if not _fits(param.shape, value.shape):
            raise ValueError(f"parameter {key!r} is {tuple(param.shape)} here and {tuple(value.shape)} in the "
                             "source network: the two structures differ")
        param.set_data(value)


def _fits(shape: Sequence[int], value_shape: Sequence[int]) -> bool:
    """Whether a value of ``value_shape`` fits a parameter of ``shape`` (0: not known yet, the
    parameter's shape is inferred at its first forward pass)."""
    return len(shape) == len(value_shape) and all(d in (0, v) for d, v in zip(shape, value_shape))


def start_from_kinetics(net: Any, name: str, classifier: Sequence[str]) -> None:
    """``net``'s parameters but those under the ``classifier`` prefixes (``("output.",)``) from
    the published weights of the registry's ``name`` (``resnet50_v1b_kinetics400`` ...),
    fetched and verified by the hub's cache."""
    import gluon_hub

    copy_parameters(net, gluon_hub.load(f"cv/{name}", pretrained=True), skip=classifier)
