"""README's portability table is what `gluon-hub list --portability-summary --format markdown`
prints for the stored rows, so whoever measures rows again must regenerate it; and the script
that regenerates it does so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "portability_table.py"
START, END = "<!-- portability-table:start -->\n", "<!-- portability-table:end -->"
REGENERATE = "python scripts/portability_table.py"


def _summary() -> str:
    done = subprocess.run([sys.executable, "-m", "gluon_hub.cli", "list", "--portability-summary",
                           "--format", "markdown"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _table(text: str) -> str:
    assert text.count(START) == 1 and text.count(END) == 1, f"README.md lost its {START.strip()} / {END} lines"
    return text.partition(START)[2].partition(END)[0]


def test_readme_table_is_the_stored_rows():
    readme = _table((REPO / "README.md").read_text(encoding="utf-8"))
    assert readme == _summary(), (
        f"README.md's portability table differs from the stored ONNX rows; run '{REGENERATE}' "
        "(after 'gluon-hub portability --write' changed rows) and commit README.md")


def test_the_script_rewrites_only_the_table(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\nbefore\n\n{START}| an old | table |\n{END}\n\nafter\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(SCRIPT), str(readme)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert readme.read_text(encoding="utf-8") == f"# Title\n\nbefore\n\n{START}{_summary()}{END}\n\nafter\n"
    again = subprocess.run([sys.executable, str(SCRIPT), str(readme)], capture_output=True, text=True, timeout=120)
    assert "up to date" in again.stdout

    (tmp_path / "broken.md").write_text("no markers here\n", encoding="utf-8")
    broken = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "broken.md")], capture_output=True,
                            text=True, timeout=120)
    assert broken.returncode != 0 and "expected one <!-- portability-table:start --> line" in broken.stderr
    assert (tmp_path / "broken.md").read_text(encoding="utf-8") == "no markers here\n"
