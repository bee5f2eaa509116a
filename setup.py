"""Build hook that installs ``gluon_hub_mxnet_aliases.pth``; all metadata is in pyproject.toml.

A ``.pth`` file must sit at the top of site-packages, where package data cannot go:
``build_py`` writes it into the wheel's tree, and ``editable_wheel`` into the editable
wheel (``pip install -e``). Its one line lets a plain ``import mxnet`` work on numpy 1.26
(see ``_gluon_hub_mxnet_aliases.py``).
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH_NAME = "gluon_hub_mxnet_aliases.pth"
PTH_LINE = "import _gluon_hub_mxnet_aliases; _gluon_hub_mxnet_aliases.install()\n"


class BuildPyWithPth(build_py):
    def run(self) -> None:
        super().run()
        if not self.editable_mode:
            Path(self.build_lib, PTH_NAME).write_text(PTH_LINE)


class EditableWheelWithPth(editable_wheel):
    # setuptools has no public hook for extra top-level files in an editable wheel; this
    # method builds the unpacked wheel that is then zipped as it is (setuptools >= 64).
    def _run_build_commands(self, dist_name, unpacked_wheel, build_lib, tmp_dir):  # type: ignore[no-untyped-def]
        result = super()._run_build_commands(dist_name, unpacked_wheel, build_lib, tmp_dir)
        Path(unpacked_wheel, PTH_NAME).write_text(PTH_LINE)
        return result


setup(cmdclass={"build_py": BuildPyWithPth, "editable_wheel": EditableWheelWithPth})
