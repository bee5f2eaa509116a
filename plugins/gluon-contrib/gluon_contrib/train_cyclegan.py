"""Train CycleGAN on two folders of unpaired images.

    python -m gluon_contrib.train_cyclegan --domain-a horses/ --domain-b zebras/ --out run/

The defaults are the paper's: 256x256 crops of images resized to 286, a 9-block
generator, the 70x70 PatchGAN, LSGAN loss, cycle weight 10, identity weight 0.5 x 10,
Adam (lr 2e-4, beta1 0.5), batch 1, a pool of 50 generated images, 100 epochs at the
base rate then 100 of linear decay. ``--size 32 --ngf 8 --n-blocks 2 --max-iters 40``
gives a run of seconds. The run writes ``G_AB.params`` and ``G_BA.params`` (load them
with ``gluon-hub translate``), ``D_A.params``, ``D_B.params``, ``config.json`` and
``history.json`` (every iteration's losses).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Sequence

from gluon_hub.compat import mx

from .cyclegan import PatchDiscriminator, ResnetGenerator
from .gan import CycleConsistencyLoss, IdentityLoss, ImagePool, LSGANLoss, linear_decay
from .images import list_images, load_image

autograd = mx.autograd


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m gluon_contrib.train_cyclegan",
                                description="Train CycleGAN on two folders of unpaired images.")
    p.add_argument("--domain-a", required=True, type=Path, help="folder of domain A images")
    p.add_argument("--domain-b", required=True, type=Path, help="folder of domain B images")
    p.add_argument("--out", required=True, type=Path, help="folder for parameters and logs")
    p.add_argument("--size", type=int, default=256, help="training crop size (multiple of 4)")
    p.add_argument("--load-size", type=int, default=None,
                   help="resize before cropping (default: size * 286 / 256)")
    p.add_argument("--ngf", type=int, default=64, help="generator width")
    p.add_argument("--ndf", type=int, default=64, help="discriminator width")
    p.add_argument("--n-blocks", type=int, default=9, help="generator residual blocks (6 or 9)")
    p.add_argument("--epochs", type=int, default=100, help="epochs at the base learning rate")
    p.add_argument("--epochs-decay", type=int, default=100,
                   help="epochs of linear decay to zero after those")
    p.add_argument("--max-iters", type=int, default=None, help="stop after this many iterations")
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--beta1", type=float, default=0.5)
    p.add_argument("--lambda-cycle", type=float, default=10.0)
    p.add_argument("--lambda-identity", type=float, default=0.5,
                   help="identity weight as a fraction of the cycle weight (0 turns it off)")
    p.add_argument("--pool-size", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every", type=int, default=100, help="print losses every N iterations")
    return p


class _Images:
    """Unpaired sampling: domain A in order, domain B at random, as the authors do."""

    def __init__(self, args: argparse.Namespace, rng: random.Random) -> None:
        self.a, self.b = list_images(args.domain_a), list_images(args.domain_b)
        self.size = args.size
        self.load_size = args.load_size or args.size * 286 // 256
        self.rng = rng

    def __len__(self) -> int:
        return max(len(self.a), len(self.b))

    def batch(self, start: int, batch_size: int):
        a = [load_image(self.a[(start + i) % len(self.a)], self.size, self.load_size, self.rng)
             for i in range(batch_size)]
        b = [load_image(self.rng.choice(self.b), self.size, self.load_size, self.rng)
             for _ in range(batch_size)]
        return mx.nd.concat(*a, dim=0), mx.nd.concat(*b, dim=0)


def _check(args: argparse.Namespace) -> None:
    if args.size < 32 or args.size % 4:
        raise ValueError(f"--size must be a multiple of 4 and at least 32 (the PatchGAN's "
                         f"smallest input), got {args.size}")
    for name in ("ngf", "ndf", "n_blocks", "batch_size"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be positive")
    if args.epochs + args.epochs_decay < 1:
        raise ValueError("train for at least one epoch (--epochs + --epochs-decay)")


def discriminator_step(
    trainer: mx.gluon.Trainer, gan: LSGANLoss, batches: Sequence[tuple]
) -> list[float]:
    """One update of discriminators, each given as ``(d, real, fake)`` with ``fake``
    detached from its generator: ``d`` learns to score real images 1 and generated ones 0.
    The loss is halved, as in the paper, so D learns slower than G. Returns each mean loss."""
    with autograd.record():
        losses = [0.5 * (gan(d(real), True) + gan(d(fake), False)) for d, real, fake in batches]
    autograd.backward(losses)
    trainer.step(len(batches[0][1]))
    return [float(loss.mean().asscalar()) for loss in losses]


def train(args: argparse.Namespace) -> dict[str, list[float]]:
    """Run the training described by parsed ``args``; returns the loss history."""
    _check(args)
    rng = random.Random(args.seed)
    mx.random.seed(args.seed)
    data = _Images(args, rng)
    init = mx.init.Normal(0.02)
    g_ab = ResnetGenerator(ngf=args.ngf, n_blocks=args.n_blocks, prefix="g_ab_")
    g_ba = ResnetGenerator(ngf=args.ngf, n_blocks=args.n_blocks, prefix="g_ba_")
    d_a = PatchDiscriminator(ndf=args.ndf, prefix="d_a_")
    d_b = PatchDiscriminator(ndf=args.ndf, prefix="d_b_")
    for net in (g_ab, g_ba, d_a, d_b):
        net.initialize(init)
        net.hybridize()
    adam = {"learning_rate": args.lr, "beta1": args.beta1}
    g_params, d_params = g_ab.collect_params(), d_a.collect_params()
    g_params.update(g_ba.collect_params())
    d_params.update(d_b.collect_params())
    g_params.setattr("grad_req", "add")  # two backward passes per step, see below
    g_trainer = mx.gluon.Trainer(g_params, "adam", adam)
    d_trainer = mx.gluon.Trainer(d_params, "adam", adam)

    gan = LSGANLoss()
    cycle = CycleConsistencyLoss(args.lambda_cycle)
    identity = IdentityLoss(args.lambda_cycle * args.lambda_identity)
    use_identity = args.lambda_identity > 0
    pool_a, pool_b = ImagePool(args.pool_size, seed=args.seed), ImagePool(args.pool_size, seed=args.seed + 1)
    history: dict[str, list[float]] = {k: [] for k in (
        "g_gan", "cycle", "identity", "d_a", "d_b", "lr")}
    iteration, started = 0, time.time()
    steps = -(-len(data) // args.batch_size)
    for epoch in range(args.epochs + args.epochs_decay):
        lr = args.lr * linear_decay(epoch, args.epochs, args.epochs_decay)
        g_trainer.set_learning_rate(lr)
        d_trainer.set_learning_rate(lr)
        for step in range(steps):
            if args.max_iters is not None and iteration >= args.max_iters:
                break
            real_a, real_b = data.batch(step * args.batch_size, args.batch_size)
            # Each generator runs once per recorded graph: MXNet 1.9's oneDNN deconvolution
            # fails ("could not execute a primitive") when one Conv2DTranspose is used twice
            # in a graph. The two directions are recorded apart and gradients accumulated.
            losses = {}
            for g_src, g_dst, d_dst, real_src, real_dst in ((g_ab, g_ba, d_b, real_a, real_b),
                                                           (g_ba, g_ab, d_a, real_b, real_a)):
                with autograd.record():
                    if use_identity:  # G(src) and G(dst) in one batch: instance norm is per image
                        both = g_src(mx.nd.concat(real_src, real_dst, dim=0))
                        fake = mx.nd.slice_axis(both, axis=0, begin=0, end=len(real_src))
                        same = mx.nd.slice_axis(both, axis=0, begin=len(real_src), end=None)
                        loss_idt = identity(same, real_dst)
                    else:
                        fake, loss_idt = g_src(real_src), mx.nd.zeros((len(real_src),))
                    loss_gan = gan(d_dst(fake), True)
                    loss_cycle = cycle(g_dst(fake), real_src)
                    loss = loss_gan + loss_cycle + loss_idt
                loss.backward()
                for key, value in (("g_gan", loss_gan), ("cycle", loss_cycle),
                                   ("identity", loss_idt)):
                    losses[key] = losses.get(key, 0.0) + float(value.mean().asscalar())
                if g_src is g_ab:
                    fake_b = fake
                else:
                    fake_a = fake
            g_trainer.step(args.batch_size)
            g_params.zero_grad()
            # the discriminators see generated images from the history pool, detached
            old_b, old_a = pool_b.query(fake_b.detach()), pool_a.query(fake_a.detach())
            losses["d_b"], losses["d_a"] = discriminator_step(
                d_trainer, gan, [(d_b, real_b, old_b), (d_a, real_a, old_a)])
            losses["lr"] = lr
            for key, value in losses.items():
                history[key].append(value)
            iteration += 1
            if iteration % args.log_every == 0:
                print(f"epoch {epoch} iter {iteration}: "
                      + " ".join(f"{k}={v[-1]:.4f}" for k, v in history.items())
                      + f" ({time.time() - started:.0f}s)", flush=True)
        _save(args, (g_ab, g_ba, d_a, d_b), history)  # each epoch: a long run can be stopped
        if args.max_iters is not None and iteration >= args.max_iters:
            break
    return history


def _save(args: argparse.Namespace, nets, history: dict[str, list[float]]) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    for name, net in zip(("G_AB", "G_BA", "D_A", "D_B"), nets):
        net.save_parameters(str(args.out / f"{name}.params"))
    config = {"model": "cyclegan_resnet_9blocks" if args.n_blocks == 9 else None,
              "n_blocks": args.n_blocks, "ngf": args.ngf, "ndf": args.ndf, "size": args.size}
    (args.out / "config.json").write_text(json.dumps(config, indent=1))
    (args.out / "history.json").write_text(json.dumps(history))


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        train(args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"train_cyclegan: error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
