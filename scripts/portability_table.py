"""Write README's portability table from the stored ONNX rows: what
``gluon-hub list --portability-summary --format markdown`` prints, between the README's
``<!-- portability-table:start -->`` and ``<!-- portability-table:end -->`` lines.

Run it after ``gluon-hub portability --write`` has changed rows (needs no MXNet)::

    python scripts/portability_table.py

``tests/docs/test_portability_table.py`` fails while the README's table differs from the
command's output, so a re-measured row cannot leave the README behind.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
START, END = "<!-- portability-table:start -->", "<!-- portability-table:end -->"
COMMAND = ("list", "--portability-summary", "--format", "markdown")


def generated() -> str:
    """The table as the command prints it for the installed plugins' rows."""
    done = subprocess.run([sys.executable, "-m", "gluon_hub.cli", *COMMAND], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"gluon-hub {' '.join(COMMAND)} failed: {done.stderr.strip()}")
    return done.stdout


def split(text: str, path: Path) -> tuple[str, str, str]:
    """The text before the table (through the start marker), the table, and the rest."""
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise SystemExit(f"{path}: expected one {START} line followed by one {END} line "
                         "around the portability table")
    head, _, rest = text.partition(START + "\n")
    table, _, tail = rest.partition(END)
    return head + START + "\n", table, END + tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("readme", nargs="?", type=Path, default=REPO / "README.md")
    args = parser.parse_args(argv)
    text = args.readme.read_text(encoding="utf-8")
    head, table, tail = split(text, args.readme)
    new = generated()
    if table == new:
        print(f"{args.readme}: the portability table is up to date")
        return 0
    tmp = args.readme.with_name(args.readme.name + ".tmp")
    tmp.write_text(head + new + tail, encoding="utf-8")
    tmp.replace(args.readme)
    print(f"{args.readme}: wrote the portability table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
