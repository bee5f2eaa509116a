"""The plugin's object-tracking models (being written: the tracking helper replaces this file)."""

from __future__ import annotations

from gluon_hub.specs import ModelSpec


def tracking_specs() -> list[ModelSpec]:
    return []
