"""The CycleGAN training script end to end on tiny images, and the translate command."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gluon_contrib import train_cyclegan
from gluon_contrib.cyclegan import PatchDiscriminator, ResnetGenerator
from gluon_contrib.gan import LSGANLoss
from gluon_contrib.images import list_images, load_image
from gluon_hub.cli import main as hub_main
from gluon_hub.compat import mx

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


def test_cycle_and_identity_losses_decrease(trained):
    history = json.loads((trained / "history.json").read_text())
    cycle = history["cycle"]
    assert len(cycle) == 36
    assert np.mean(cycle[-6:]) < 0.7 * np.mean(cycle[:6])
    assert np.mean(history["identity"][-6:]) < np.mean(history["identity"][:6])
    assert all(np.isfinite(history[k]).all() for k in ("g_gan", "d_a", "d_b"))
    for name in ("G_AB", "G_BA", "D_A", "D_B"):
        assert (trained / f"{name}.params").stat().st_size > 0


def _folder(folder):
    """Every image of ``folder`` as one batch at the training size."""
    return mx.nd.concat(*[load_image(path, 32) for path in list_images(folder)], dim=0)


def _mean_score(d, images) -> float:
    return float(d(images).mean().asscalar())


@pytest.mark.parametrize("d_name, g_name, src, dst", [("D_B", "G_AB", 0, 1), ("D_A", "G_BA", 1, 0)])
def test_trained_discriminators_tell_real_from_generated(trained, image_domains,
                                                         d_name, g_name, src, dst):
    """After 36 iterations each discriminator scores its domain's real images near the
    real target 1 and the generator's translations near the fake target 0."""
    d, g = PatchDiscriminator(ndf=8), ResnetGenerator(ngf=8, n_blocks=2)
    d.load_parameters(str(trained / f"{d_name}.params"))
    g.load_parameters(str(trained / f"{g_name}.params"))
    real, generated = _folder(image_domains[dst]), g(_folder(image_domains[src]))
    assert _mean_score(d, real) > 0.5 > _mean_score(d, generated)
    d_loss = json.loads((trained / "history.json").read_text())[d_name.lower()]
    assert np.mean(d_loss[-6:]) < 0.7 * np.mean(d_loss[:6])


def test_a_discriminator_step_moves_real_scores_to_1_and_fake_ones_to_0(image_domains):
    """The script's D update alone, on a fixed batch against a fixed, untrained generator."""
    mx.random.seed(0)
    d, g = PatchDiscriminator(ndf=8), ResnetGenerator(ngf=8, n_blocks=2)
    for net in (d, g):
        net.initialize(mx.init.Normal(0.02))
    real, fake = _folder(image_domains[1]), g(_folder(image_domains[0]))
    trainer = mx.gluon.Trainer(d.collect_params(), "adam", {"learning_rate": 2e-4, "beta1": 0.5})
    losses = [train_cyclegan.discriminator_step(trainer, LSGANLoss(), [(d, real, fake)])[0]
              for _ in range(10)]
    assert losses[-1] < 0.1 * losses[0]
    assert abs(_mean_score(d, real) - 1) < 0.05 and abs(_mean_score(d, fake)) < 0.05


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
