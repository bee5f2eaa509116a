"""The training loop of the recipe-driven scripts (detection and Mask R-CNN): schedule
defaults, the iteration warm-up, and the epochs of steps, validation and checkpoints.

A recipe (:mod:`gluon_cv_core.detection.training`) supplies the training data, the batches,
the losses and GluonCV's schedule; the scripts differ only in their data and in how they
validate, which they pass to :func:`fit` as a function.
"""

from __future__ import annotations

import argparse
import logging
import math
import time
from typing import Any, Callable, Sequence

from gluon_hub.compat import mx

from ..common.training import Checkpoints, lr_schedule

#: schedule settings a recipe may set, and the value when neither it nor the user does
FALLBACKS = {"lr": 0.001, "lr_mode": "step", "lr_decay": 0.1, "lr_decay_epoch": "", "warmup_epochs": 0,
             "wd": 5e-4, "momentum": 0.9, "num_epochs": 100, "optimizer": "sgd", "batch_size": 8,
             "lr_warmup": 0, "lr_warmup_factor": 1.0 / 3.0}


def fill_defaults(args: argparse.Namespace, defaults: dict[str, Any]) -> None:
    """Fill every schedule setting the user left out from the recipe, then the fallbacks."""
    aliases = {"num_epochs": "epochs"}
    for key, fallback in FALLBACKS.items():
        if getattr(args, key) is None:
            value = defaults.get(key, defaults.get(aliases.get(key, key), fallback))
            if key == "lr_decay_epoch" and not isinstance(value, str):
                value = ",".join(str(int(v)) for v in value)
            setattr(args, key, value)


class IterationWarmup(mx.lr_scheduler.LRScheduler):
    """GluonCV's Faster R-CNN warm-up on top of ``schedule``: update ``i`` (from 0) of the first
    epoch, up to ``iterations``, runs at ``factor * (1 - a) + a`` of the rate, ``a = i / iterations``.
    Per iteration rather than per epoch because COCO's first epoch alone is 118k iterations."""

    def __init__(self, schedule: Any, iterations: int, factor: float, steps_per_epoch: int) -> None:
        super().__init__(base_lr=schedule.base_lr)
        self.schedule, self.iterations, self.factor = schedule, iterations, factor
        self.steps_per_epoch = steps_per_epoch

    def __call__(self, num_update: int) -> float:
        lr = self.schedule(num_update)
        i = num_update - 1  # MXNet counts updates from 1
        if self.iterations > 0 and i <= self.iterations and i < self.steps_per_epoch:
            alpha = i / self.iterations
            lr *= self.factor * (1 - alpha) + alpha
        return lr


def warmed_schedule(args: argparse.Namespace, steps_per_epoch: int) -> Any:
    """:func:`lr_schedule`, with the iteration warm-up of ``--lr-warmup`` when it is positive."""
    schedule = lr_schedule(args, steps_per_epoch)
    if args.lr_warmup > 0:
        return IterationWarmup(schedule, args.lr_warmup, args.lr_warmup_factor, steps_per_epoch)
    return schedule


def trace_afresh(net: Any, hybridize: bool) -> None:
    """Drop the cached graph: a detector's graph differs between training and inference
    (``autograd.is_training()`` is read when the graph is traced), and a hybridized block
    would otherwise keep the first one it traced."""
    if hybridize:
        net.hybridize(static_alloc=True)


def fit(args: argparse.Namespace, net: Any, recipe: Any, train_data: Any, ctx: Sequence[Any], kv: Any,
        validate: Callable[[], dict[str, float]], best: str, log: logging.Logger) -> list[dict[str, float]]:
    """Train ``net`` on ``train_data`` with ``recipe``'s batches and losses for ``args.num_epochs``.

    Each device takes ``args.batch_size`` images per step and the gradients are averaged over
    every device of every worker of ``kv``. ``validate()`` runs every ``args.val_interval``
    epochs and after the last; its values join the epoch's record, and the record's ``best``
    value picks the weights kept. Returns one record per epoch.
    """
    from gluon_hub.data import SplitSampler

    sampler = SplitSampler(len(train_data), kv.num_workers, kv.rank, even_size=True)
    global_batch = args.batch_size * len(ctx)
    if len(sampler) < global_batch:
        raise ValueError(f"this worker's {len(sampler)} training images do not fill one batch of {global_batch} "
                         f"(--batch-size {args.batch_size} x {len(ctx)} device(s)); lower --batch-size")
    loader = mx.gluon.data.DataLoader(train_data, batch_sampler=recipe.batch_sampler(sampler, global_batch),
                                      batchify_fn=recipe.batchify(), num_workers=args.num_workers)
    steps_per_epoch = len(sampler) // global_batch
    if args.steps_per_epoch:
        steps_per_epoch = min(steps_per_epoch, args.steps_per_epoch)

    recipe.prepare()
    trainer = mx.gluon.Trainer(
        net.collect_params(), args.optimizer,
        {"learning_rate": args.lr, "wd": args.wd, "lr_scheduler": warmed_schedule(args, steps_per_epoch),
         **({"momentum": args.momentum} if args.optimizer in ("sgd", "nag") else {})},
        kvstore=kv,
    )
    names = recipe.loss_names
    history: list[dict[str, float]] = []
    checkpoints = Checkpoints(args.save_dir if kv.rank == 0 else None, args.model, args.save_frequency)
    for epoch in range(args.num_epochs):
        recipe.begin_epoch(epoch, args.num_epochs)
        trace_afresh(net, args.hybridize)  # training-mode graph
        tic, sums, steps = time.time(), [0.0] * len(names), 0
        for steps, batch in enumerate(loader, 1):
            parts = [mx.gluon.utils.split_and_load(item, ctx, even_split=False) for item in batch]
            with mx.autograd.record():
                per_device = [recipe.losses(device_batch) for device_batch in zip(*parts)]
                totals = [mx.nd.add_n(*[loss.sum() for loss in losses]) for losses in per_device]
            mx.autograd.backward(totals)
            trainer.step(len(ctx) * kv.num_workers)  # losses are per-device means: average the devices
            values = [sum(float(losses[k].sum().asscalar()) for losses in per_device) / len(per_device)
                      for k in range(len(names))]
            bad = [name for name, value in zip(names, values) if not math.isfinite(value)]
            if bad:
                raise FloatingPointError(
                    f"epoch {epoch + 1} step {steps}: the {', '.join(bad)} loss became {values[names.index(bad[0])]} "
                    f"at learning rate {trainer.learning_rate:g}; lower --lr or warm up longer "
                    "(--warmup-epochs, --lr-warmup)")
            sums = [s + v for s, v in zip(sums, values)]
            if args.log_interval and steps % args.log_interval == 0:
                log.info("epoch %d step %d/%d: %s, lr %.5f, %.1f images/s", epoch + 1, steps, steps_per_epoch,
                         ", ".join(f"{n} {s / steps:.4f}" for n, s in zip(names, sums)), trainer.learning_rate,
                         steps * global_batch / (time.time() - tic))
            if steps >= steps_per_epoch:
                break
        record: dict[str, float] = {"epoch": epoch + 1, **{n: s / max(steps, 1) for n, s in zip(names, sums)},
                                    "lr": trainer.learning_rate,
                                    "images_per_s": steps * global_batch / (time.time() - tic)}
        last = epoch + 1 == args.num_epochs
        if (epoch + 1) % args.val_interval == 0 or last:
            trace_afresh(net, args.hybridize)  # inference-mode graph
            record.update(validate())
        history.append(record)
        log.info("epoch %d: %s", epoch + 1, ", ".join(f"{k} {v:.4g}" for k, v in record.items() if k != "epoch"))
        checkpoints.save(net, epoch, last, record.get(best))
    return history
