"""The ``pip install`` commands the hub's messages give, for plugins to give the same.

The hub's first-party distributions are not on a package index, so a hint must name a built
wheel or a checkout folder (:func:`install_command`), and an extra's hint its own
requirements, read from the installed metadata (:func:`extra_command`).
"""

from __future__ import annotations

from ._index import extra_command, install_command

__all__ = ["extra_command", "install_command"]
