"""The batchify functions the hub registers by name; stdlib only, so listing stays light."""

from __future__ import annotations

from gluon_hub.specs import BatchifySpec

_MODULE = "gluon_hub.data.batchify"

_ENTRIES = (
    ("stack", "Stack", "Stack samples of one shape into a batch."),
    ("pad", "Pad", "Pad samples to the longest along an axis and stack them; optional lengths."),
    ("tuple", "Tuple", "Apply one batchify function per field of tuple samples."),
    ("list", "List", "Keep a field as a plain list (text, ids)."),
    ("dict", "Dict", "Apply one batchify function per key of dict samples."),
    ("named_tuple", "NamedTuple", "Apply one batchify function per field of namedtuple samples."),
)


def batchify_specs() -> list[BatchifySpec]:
    """Specs of the core batchify functions, for ``gluon_hub.get_batchify(name, **kwargs)``."""
    return [
        BatchifySpec(name=name, factory=f"{_MODULE}:{attr}", description=text)
        for name, attr, text in _ENTRIES
    ]
