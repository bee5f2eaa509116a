"""The ``gluon-hub`` command line.

Built-in commands live in one module each (``catalog``, ``registry`` ...), which adds its
subparsers in ``add_commands``. Plugins add commands through the ``gluon_hub_commands``
hook: ``gluon-hub predict ...`` calls the plugin's ``main(argv)``, imported only then.

Exit codes: 0 success, 1 failure (an error, a stale registry), 2 bad usage, 130 interrupt.
Errors go to stderr as one line, ``gluon-hub: error: ...``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from .._version import __version__

COMMAND_MODULES = (
    "gluon_hub.cli.catalog",
    "gluon_hub.cli.registry",
    "gluon_hub.cli.cache",
    "gluon_hub.cli.publishing",
    "gluon_hub.cli.plugin_tools",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gluon-hub",
        description="Find, load, fetch and publish MXNet Gluon models from any installed plugin.",
        epilog="Plugins may add commands: 'gluon-hub plugins' lists them under each plugin.",
    )
    parser.add_argument("--version", action="version", version=f"gluon-hub {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        importlib.import_module(module).add_commands(subparsers)
    return parser


def _plugin_command(name: str):
    """The factory of a plugin-provided command, or None when no plugin adds ``name``."""
    from .._factory import import_object
    from .._hub import get_hub
    from ..errors import UnknownNameError

    try:
        spec = get_hub().catalog("commands").get(name)
    except UnknownNameError:
        return None
    return import_object(spec.factory, f"command {spec.qualified_name!r}")


def error(message: str) -> int:
    print(f"gluon-hub: error: {message}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``gluon-hub`` console script; returns the exit code."""
    from ..errors import HubError

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    builtin = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    try:
        if argv and not argv[0].startswith("-") and argv[0] not in builtin:
            command = _plugin_command(argv[0])
            if command is not None:
                return int(command(argv[1:]) or 0)
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return 2
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (``gluon-hub list | head``): not an error. Point stdout at
        # devnull so that the interpreter's final flush does not complain either.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (HubError, KeyError, ValueError, TypeError, OSError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        return error(str(message))
