"""What the scripts share: command-line options, the model and vocabulary set-up, and the
BERT fine-tuning loop (BERTAdam, linear warmup then decay, global-norm clipping)."""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

import gluon_hub
from gluon_hub.compat import mx

from ..text import Vocab, load_vocab

# Keyword arguments the scripts choose themselves: the heads a task needs.
_HEAD_KWARGS = ("use_pooler", "use_decoder", "use_classifier")


def log(message: str) -> None:
    """Progress goes to stderr, so that stdout carries the results only."""
    print(message, file=sys.stderr, flush=True)


def json_object(text: str) -> dict[str, Any]:
    """argparse type of ``--model-kwargs``: a JSON object."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError('expected a JSON object, e.g. \'{"num_layers": 2}\'')
    return value


def add_model_arguments(parser: argparse.ArgumentParser, model: str, weights: str,
                        example_kwargs: str) -> None:
    """Options naming the model, its starting weights and its vocabulary."""
    group = parser.add_argument_group("model")
    group.add_argument("--model", default=model, help=f"hub model name (default: {model})")
    group.add_argument("--pretrained", default=weights, metavar="TAG",
                       help="published weights to start from, a tag of gluon_hub.info(MODEL)"
                       f".weights (default: {weights}), or 'none' for random initialisation")
    group.add_argument("--vocab-file", type=Path, metavar="JSON",
                       help="a GluonNLP-format vocabulary JSON (default: the published "
                       "vocabulary of --pretrained)")
    group.add_argument("--model-kwargs", type=json_object, default={}, metavar="JSON",
                       help="factory keyword arguments overriding the architecture, e.g. "
                       f"'{example_kwargs}'; vocab_size defaults to the vocabulary's size")
    group.add_argument("--gpu", type=int, metavar="ID", help="GPU to run on (default: CPU)")


def add_training_arguments(parser: argparse.ArgumentParser, lr: float, epochs: int,
                           batch_size: int) -> None:
    """Options of :func:`train`."""
    group = parser.add_argument_group("training")
    group.add_argument("--epochs", type=int, default=epochs, help=f"default: {epochs}")
    group.add_argument("--batch-size", type=int, default=batch_size,
                       help=f"training batch size (default: {batch_size})")
    group.add_argument("--dev-batch-size", type=int, default=64,
                       help="evaluation batch size (default: 64)")
    group.add_argument("--lr", type=float, default=lr, help=f"peak learning rate (default: {lr})")
    group.add_argument("--warmup-ratio", type=float, default=0.1,
                       help="fraction of the steps over which the learning rate rises linearly "
                       "from 0; it then falls linearly to 0 (default: 0.1)")
    group.add_argument("--weight-decay", type=float, default=0.01,
                       help="decoupled weight decay, not applied to biases and layer norms "
                       "(default: 0.01)")
    group.add_argument("--max-grad-norm", type=float, default=1.0,
                       help="clip the global gradient norm to this (default: 1.0)")
    group.add_argument("--seed", type=int, default=2, help="random seed (default: 2)")
    group.add_argument("--log-interval", type=int, default=50,
                       help="steps between progress lines (default: 50)")


def positive(name: str, value: float) -> None:
    """Refuse a non-positive option value."""
    if not value > 0:
        raise ValueError(f"{name} must be positive, got {value}")


def check_training_arguments(args: argparse.Namespace) -> None:
    """Refuse option values that would make the training loop meaningless."""
    for name in ("epochs", "batch_size", "dev_batch_size", "lr", "log_interval"):
        positive("--" + name.replace("_", "-"), getattr(args, name))
    if not 0 <= args.warmup_ratio < 1:
        raise ValueError(f"--warmup-ratio must be in [0, 1), got {args.warmup_ratio}")


def weight_tag(args: argparse.Namespace) -> str | None:
    """The ``--pretrained`` tag, or ``None`` for random initialisation."""
    return None if args.pretrained.lower() == "none" else args.pretrained


def context(args: argparse.Namespace) -> Any:
    """The MXNet context of ``--gpu``."""
    return mx.cpu() if args.gpu is None else mx.gpu(args.gpu)


def seed_everything(seed: int) -> None:
    """Seed Python's, numpy's and MXNet's generators."""
    random.seed(seed)
    np.random.seed(seed)
    mx.random.seed(seed)


def read_vocab(path: Path) -> Vocab:
    """A vocabulary from a GluonNLP-format JSON file."""
    try:
        return Vocab.from_json(Path(path).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def bert_vocab(args: argparse.Namespace) -> Vocab:
    """``--vocab-file``, else the published vocabulary of the ``--pretrained`` weights."""
    if args.vocab_file is not None:
        return read_vocab(args.vocab_file)
    tag = weight_tag(args)
    if tag is None:
        raise ValueError("--pretrained none needs --vocab-file: there is no published "
                         "vocabulary to fall back on")
    return load_vocab(tag)


def lower_case(args: argparse.Namespace) -> bool:
    """``--lower``/``--no-lower``, else what the weights were trained with (uncased: lower)."""
    if args.lower is not None:
        return args.lower
    tag = weight_tag(args)
    return tag is None or "uncased" in tag


def model_kwargs(args: argparse.Namespace, vocab: Vocab) -> dict[str, Any]:
    """``--model-kwargs`` with ``vocab_size`` defaulting to the vocabulary's size."""
    kwargs = dict(args.model_kwargs)
    kwargs.setdefault("vocab_size", len(vocab))
    if kwargs["vocab_size"] < len(vocab):
        raise ValueError(f"vocab_size {kwargs['vocab_size']} is smaller than the vocabulary "
                         f"({len(vocab)} tokens): token ids would fall outside the embedding")
    return kwargs


def build_bert(args: argparse.Namespace, vocab: Vocab, use_pooler: bool, ctx: Any) -> Any:
    """The BERT encoder without pre-training heads, from ``--pretrained`` weights or random.

    The published files hold the masked-LM and next-sentence heads too; they are skipped
    (``ignore_extra``), so the encoder is built by the hub and then loaded here.
    """
    return build_encoder(args, vocab, ctx, use_pooler=use_pooler, use_decoder=False,
                         use_classifier=False)


def build_encoder(args: argparse.Namespace, vocab: Vocab, ctx: Any, **heads: bool) -> Any:
    """``--model`` built with the head switches ``heads`` its factory takes (BERT's three,
    RoBERTa's ``use_decoder``, none for DistilBERT), loaded as :func:`build_bert` does."""
    kwargs = model_kwargs(args, vocab)
    chosen = [k for k in _HEAD_KWARGS if k in kwargs]
    if chosen:
        raise ValueError(f"--model-kwargs cannot set {', '.join(chosen)}: the script picks "
                         "the heads its task needs")
    bert = gluon_hub.load(args.model, pretrained=False, ctx=ctx, **heads, **kwargs)
    tag = weight_tag(args)
    if tag is not None:
        # fetch_params checks that the file is an MXNet NDArray file before MXNet parses it.
        params = gluon_hub.cache.fetch_params(gluon_hub.info(args.model).weight(tag).file)
        bert.load_parameters(str(params), ctx=ctx, ignore_extra=True)
    return bert


class BERTAdam(mx.optimizer.Optimizer):
    """Adam without bias correction and with decoupled weight decay, as BERT was trained.

    The step is ``w -= lr * (m / (sqrt(v) + epsilon) + wd * w)``.
    """

    def __init__(self, learning_rate: float = 1e-5, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-6, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon

    def create_state(self, index: int, weight: Any) -> tuple[Any, Any]:
        return (mx.nd.zeros(weight.shape, weight.context, dtype=weight.dtype),
                mx.nd.zeros(weight.shape, weight.context, dtype=weight.dtype))

    def update(self, index: int, weight: Any, grad: Any, state: tuple[Any, Any]) -> None:
        self._update_count(index)
        mean, var = state
        clip = self.clip_gradient if self.clip_gradient is not None else -1
        # adamw_update scales the decay by eta only: lr goes into eta so that it scales both.
        mx.nd.contrib.adamw_update(weight, grad, mean, var, rescale_grad=self.rescale_grad,
                                   lr=1.0, eta=self._get_lr(index), wd=self._get_wd(index),
                                   beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon,
                                   clip_gradient=clip, out=weight)


def lr_factor(step: int, total: int, warmup: int) -> float:
    """Linear warmup over ``warmup`` steps, then linear decay reaching 0 after ``total``.

    ``step`` counts from 1; the last step still gets a positive rate.
    """
    if step <= warmup:
        return step / warmup
    return (total - step + 1) / (total - warmup)


Batch = tuple[Sequence[Any], Sequence[Any]]


def train(net: Any, loss_fn: Callable[..., Any], epoch_batches: Callable[[], Iterable[Batch]],
          steps_per_epoch: int, args: argparse.Namespace, ctx: Any) -> list[float]:
    """Fine-tune ``net`` and return the mean loss of every step.

    ``epoch_batches()`` yields one epoch of ``(inputs, targets)``; the loss is
    ``loss_fn(net(*inputs), *targets)`` averaged over the batch.
    """
    params = net.collect_params()
    for param in net.collect_params(".*(gamma|beta|bias)$").values():
        param.wd_mult = 0.0
    trainer = mx.gluon.Trainer(params, BERTAdam(learning_rate=args.lr, wd=args.weight_decay),
                               update_on_kvstore=False)
    trained = [p for p in params.values() if p.grad_req != "null"]
    total = steps_per_epoch * args.epochs
    warmup = int(total * args.warmup_ratio)
    losses: list[float] = []
    for epoch in range(args.epochs):
        for inputs, targets in epoch_batches():
            step = len(losses) + 1
            trainer.set_learning_rate(args.lr * lr_factor(step, total, warmup))
            inputs = [x.as_in_context(ctx) for x in inputs]
            targets = [y.as_in_context(ctx) for y in targets]
            with mx.autograd.record():
                loss = loss_fn(net(*inputs), *targets).mean()
            loss.backward()
            trainer.allreduce_grads()
            mx.gluon.utils.clip_global_norm([p.grad(ctx) for p in trained], args.max_grad_norm)
            trainer.update(1)
            losses.append(float(loss.asscalar()))
            if step % args.log_interval == 0 or step == total:
                recent = losses[-args.log_interval:]
                log(f"epoch {epoch + 1} step {step}/{total}: loss {np.mean(recent):.4f}, "
                    f"lr {trainer.learning_rate:.3g}")
    return losses


def batches(indices: Sequence[int], batch_size: int) -> list[list[int]]:
    """Consecutive chunks of ``indices``."""
    return [list(indices[i:i + batch_size]) for i in range(0, len(indices), batch_size)]


def write_json(path: Path, value: Any) -> None:
    """Write ``value`` as indented UTF-8 JSON, creating the folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
