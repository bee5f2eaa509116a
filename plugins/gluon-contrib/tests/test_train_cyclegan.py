"""The CycleGAN training script end to end on tiny images, and the translate command."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gluon_contrib import train_cyclegan
from gluon_hub.cli import main as hub_main

SMALL = ["--size", "32", "--ngf", "8", "--ndf", "8", "--n-blocks", "2", "--epochs", "10",
         "--epochs-decay", "2", "--log-every", "1000"]


@pytest.fixture(scope="module")
def trained(image_domains, tmp_path_factory):
    a, b = image_domains
    out = tmp_path_factory.mktemp("cyclegan")
    code = train_cyclegan.main(["--domain-a", str(a), "--domain-b", str(b), "--out", str(out),
                                "--max-iters", "36", *SMALL])
    assert code == 0
    return out


def test_cycle_loss_decreases(trained):
    history = json.loads((trained / "history.json").read_text())
    cycle = history["cycle"]
    assert len(cycle) == 36
    assert np.mean(cycle[-6:]) < 0.7 * np.mean(cycle[:6])
    assert np.mean(history["identity"][-6:]) < np.mean(history["identity"][:6])
    assert all(np.isfinite(history[k]).all() for k in ("g_gan", "d_a", "d_b"))
    for name in ("G_AB", "G_BA", "D_A", "D_B"):
        assert (trained / f"{name}.params").stat().st_size > 0


def test_translate_writes_an_image_of_the_generator(trained, image_domains, tmp_path, capsys):
    from PIL import Image

    target = tmp_path / "out" / "zebra.png"
    source = sorted(image_domains[0].iterdir())[0]
    assert hub_main(["translate", str(trained / "G_AB.params"), str(source), str(target)]) == 0
    with Image.open(target) as image:
        assert image.size == (32, 32) and image.mode == "RGB"
        assert np.asarray(image).std() > 0


def test_translate_explains_a_generator_mismatch(trained, image_domains, tmp_path, capsys):
    (tmp_path / "G.params").write_bytes((trained / "G_AB.params").read_bytes())  # no config.json
    source = sorted(image_domains[0].iterdir())[0]
    code = hub_main(["translate", str(tmp_path / "G.params"), str(source), str(tmp_path / "x.png"),
                     "--n-blocks", "3", "--ngf", "8"])
    assert code == 1
    assert "--n-blocks and --ngf" in capsys.readouterr().err


def test_learning_rate_follows_the_schedule(image_domains, tmp_path):
    a, b = image_domains
    args = train_cyclegan.build_parser().parse_args(
        ["--domain-a", str(a), "--domain-b", str(b), "--out", str(tmp_path), "--size", "32",
         "--ngf", "4", "--ndf", "4", "--n-blocks", "1", "--epochs", "1", "--epochs-decay", "2",
         "--lambda-identity", "0"])
    history = train_cyclegan.train(args)
    assert history["lr"] == pytest.approx([2e-4] * 4 + [2e-4 * 2 / 3] * 4 + [2e-4 / 3] * 4)
    assert history["identity"] == [0.0] * 12


def test_bad_folders_and_sizes_are_reported(image_domains, tmp_path, capsys):
    a, _ = image_domains
    assert train_cyclegan.main(["--domain-a", str(a), "--domain-b", str(tmp_path),
                                "--out", str(tmp_path / "o")]) == 1
    assert "no images" in capsys.readouterr().err
    assert train_cyclegan.main(["--domain-a", str(a), "--domain-b", str(a), "--out",
                                str(tmp_path / "o"), "--size", "30"]) == 1
    assert "multiple of 4" in capsys.readouterr().err
