"""Installing as the README says, into fresh venvs (issues 13.1, 13.3, 12.13).

The core does not install MXNet (a user's CUDA build, ``mxnet-cu112``, must not be replaced
by the CPU wheel): without any MXNet, numpy 2 is installed, listing and search work and
building a model says what to install (the ``[mxnet]`` extra brings numpy back below 2); an MXNet older than 1.9.1 is refused at import with the same advice.
pip's cache is reused, so after the first run only the wheel builds take time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COPY_IGNORE = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "*.so")


def _run(*args: str | Path, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("GLUON_HUB_", "PYTHONPATH"))}
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=900,
                            env={**full_env, **(env or {})})
    if check:
        assert result.returncode == 0, f"{args}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def no_mxnet_venv(tmp_path_factory) -> Path:
    """A fresh venv with ``pip install ./checkout ./checkout/plugins/gluon-cv-core``: no MXNet."""
    tmp = tmp_path_factory.mktemp("no-mxnet")
    checkout = tmp / "checkout"  # a copy, so that building leaves the real checkout alone
    shutil.copytree(ROOT / "gluon_hub", checkout / "gluon_hub", ignore=COPY_IGNORE)
    for name in ("pyproject.toml", "setup.py", "_gluon_hub_mxnet_aliases.py", "README.md"):
        shutil.copy2(ROOT / name, checkout / name)
    shutil.copytree(ROOT / "plugins" / "gluon-cv-core", checkout / "plugins" / "gluon-cv-core",
                    ignore=COPY_IGNORE)
    base = getattr(sys, "_base_executable", sys.executable)
    _run(base, "-m", "venv", tmp / "env")
    python = tmp / "env" / "bin" / "python"
    _run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         checkout, checkout / "plugins" / "gluon-cv-core")
    return python


def test_the_core_installs_no_mxnet_and_listing_and_search_work(no_mxnet_venv):
    python = no_mxnet_venv
    assert _run(python, "-c", "import mxnet", check=False).returncode == 1
    listed = _run(python, "-c", "import gluon_hub, sys; print(gluon_hub.list_models("
                                "'resnet18_v1*', task='image-classification'), 'mxnet' in sys.modules)")
    assert listed.stdout.strip() == "['resnet18_v1', 'resnet18_v1b', 'resnet18_v1b_0.89'] False"
    # without MXNet nothing holds numpy below 2: pip resolves the newest
    assert _run(python, "-c", "import numpy; print(numpy.__version__)").stdout.startswith("2.")
    # the class names the ONNX runner prints are data files of the installed (not editable) wheel
    names = _run(python, "-c", "import gluon_hub, sys; print(gluon_hub.info('resnet18_v1').class_names(1000)[:2], "
                               "'mxnet' in sys.modules)")
    assert names.stdout.strip() == "['tench', 'goldfish'] False"
    gluon_hub = python.parent / "gluon-hub"
    assert "cv/resnet50_v1d" in _run(gluon_hub, "search", "resnet50_v1d").stdout
    assert "cv/resnet18_v1" in _run(gluon_hub, "list", "resnet18*").stdout


def test_building_a_model_without_mxnet_says_what_to_install(no_mxnet_venv):
    result = _run(no_mxnet_venv, "-c", "import gluon_hub; gluon_hub.load('resnet18_v1')", check=False)
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: gluon_hub needs MXNet >= 1.9.1")
    assert 'pip install "mxnet==1.9.1"' in last and "mxnet-cu112" in last
    cli = _run(no_mxnet_venv.parent / "gluon-hub", "predict", "resnet18_v1", "x.jpg", "--random-weights",
               check=False)
    assert cli.returncode == 1 and "Traceback" not in cli.stderr
    assert "gluon-hub: error: gluon_hub needs MXNet >= 1.9.1" in cli.stderr


def test_an_mxnet_older_than_1_9_1_is_refused_at_import(no_mxnet_venv, tmp_path):
    old = tmp_path / "old" / "mxnet"  # what an old CUDA build looks like: the module, its version
    old.mkdir(parents=True)
    (old / "__init__.py").write_text('__version__ = "1.8.0"\n')
    dist = tmp_path / "old" / "mxnet_cu110-1.8.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mxnet-cu110\nVersion: 1.8.0\n")
    (dist / "top_level.txt").write_text("mxnet\n")
    result = _run(no_mxnet_venv, "-c", "import gluon_hub.compat", check=False,
                  env={"PYTHONPATH": str(tmp_path / "old")})
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert "gluon_hub needs MXNet >= 1.9.1" in last and "is version 1.8.0" in last
    assert "mxnet-cu112" in last


def test_the_mxnet_extra_installs_the_cpu_build(no_mxnet_venv, tmp_path):
    """``pip install "gluon-hub[mxnet]"`` adds MXNet to the same environment, and the SciPy that
    gluon-cv-core brought beside numpy 2 is replaced by one that MXNet can import with numpy 1."""
    checkout = no_mxnet_venv.parents[2] / "checkout"
    _run(no_mxnet_venv, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         f"{checkout}[mxnet]")
    script = textwrap.dedent("""
        import gluon_hub, mxnet, numpy
        net = gluon_hub.load("resnet18_v1")
        print(mxnet.__version__, net(mxnet.nd.zeros((1, 3, 32, 32))).shape)
    """)
    result = _run(no_mxnet_venv, "-c", script)
    assert result.stdout.split()[0] == "1.9.1"
    assert result.stdout.strip().endswith("(1, 1000)")
    assert _run(no_mxnet_venv, "-c", "import mxnet").returncode == 0  # plain import, numpy 1.26
    # the extra brought numpy back below 2, which MXNet 1.9.1 needs
    assert _run(no_mxnet_venv, "-c", "import numpy; print(numpy.__version__)").stdout.startswith("1.")
