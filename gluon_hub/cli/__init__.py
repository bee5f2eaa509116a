"""The ``gluon-hub`` command line.

Built-in commands live in one module each (``catalog``, ``registry`` ...), which adds its
subparsers in ``add_commands``. Plugins add commands through the ``gluon_hub_commands``
hook: ``gluon-hub predict ...`` calls the plugin's ``main(argv)``, imported only then.

Exit codes: 0 success, 1 failure (an error, a stale registry), 2 bad usage, 130 interrupt.
The hub's own errors (and a missing file, a refused connection, a bad value) go to stderr
as one line, ``gluon-hub: error: ...``; ``--debug`` or ``GLUON_HUB_DEBUG=1`` adds the
traceback. Any other exception is a bug, in the hub or a plugin: it is shown with its
traceback and the request to report it, never as a one-line user error. Warnings about
plugins read ``gluon-hub: warning: ...``, without Python's file-and-line prefix.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from typing import Any, Sequence

from .._version import __version__

COMMAND_MODULES = (
    "gluon_hub.cli.catalog",
    "gluon_hub.cli.registry",
    "gluon_hub.cli.cache",
    "gluon_hub.cli.lock",
    "gluon_hub.cli.publishing",
    "gluon_hub.cli.plugin_tools",
    "gluon_hub.cli.catalogue",
)


class _Parser(argparse.ArgumentParser):
    """Lists the commands plugins add in ``--help``; discovers plugins only when it prints."""

    def format_help(self) -> str:
        self.epilog = _plugin_commands_epilog()
        return super().format_help()


def _plugin_commands_epilog() -> str:
    from .._hub import get_hub

    specs = get_hub().catalog("commands").select()
    if not specs:
        return "Plugins may add commands; none of the installed plugins adds one."
    width = max(len(s.name) for s in specs)
    lines = [f"  {s.name:<{width}}  {s.description} (plugin {s.plugin})".rstrip() for s in specs]
    return "commands added by plugins ('gluon-hub COMMAND --help' for each):\n" + "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gluon-hub",
        description="Find, load, fetch and publish MXNet Gluon models from any installed plugin.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"gluon-hub {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the full traceback of an error (or set GLUON_HUB_DEBUG=1)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        importlib.import_module(module).add_commands(subparsers)
    return parser


def _plugin_command(name: str):
    """The factory of a plugin-provided command, or None when no plugin adds ``name``."""
    from .._factory import import_object
    from .._hub import get_hub
    from ..errors import PluginNotInstalledError, UnknownNameError

    try:
        spec = get_hub().lookup("commands", name)
    except PluginNotInstalledError:  # the index knows the command: say what to install
        raise
    except UnknownNameError:
        return None
    return import_object(spec.factory, f"command {spec.qualified_name!r}")


def error(message: str) -> int:
    print(f"gluon-hub: error: {message}", file=sys.stderr)
    return 1


def _bug(exc: BaseException) -> int:
    """An exception nobody raised on purpose: show it whole, and say it is a bug."""
    import traceback

    traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    print(f"gluon-hub: internal error: {type(exc).__name__}: {exc}\n"
          "This is a bug in gluon-hub or in the plugin that raised it (see the traceback "
          "above), not a mistake in the command; please report it with the traceback.",
          file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``gluon-hub`` console script; returns the exit code."""
    from .. import _env

    argv = list(sys.argv[1:] if argv is None else argv)
    debug = _env.debug()
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        return _run(argv, debug)


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """The hub's warnings as one line for a reader of a terminal; others as Python shows them."""
    from ..errors import PluginWarning

    if issubclass(category, PluginWarning):
        print(f"gluon-hub: warning: {message}", file=sys.stderr)
    else:
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def _run(argv: list[str], debug: bool) -> int:
    from ..errors import HubError

    while argv and argv[0] == "--debug":  # before the command, also for plugin commands
        debug = True
        argv.pop(0)
    parser = build_parser()
    builtin = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr, arg-type]
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
    except (HubError, KeyError, ValueError, OSError, ImportError) as exc:
        # Raised on purpose (the hub's errors, input checks, missing MXNet) or by the
        # environment (a missing file, a refused connection): one line is the whole story.
        if debug:
            import traceback

            traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        return error(str(message))
    except Exception as exc:
        return _bug(exc)
