"""Helpers the detector parity tests share: random parameters, structure, comparisons.

Every detector family is compared with GluonCV the same way: GluonCV's model gets random
parameters (:func:`randomize`), saves them, ours loads them strictly, both run on
:func:`random_input`, and outputs are compared with :func:`assert_same`.
"""

from __future__ import annotations

import contextlib
import http.server
import importlib
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

import gluon_hub
from gluon_hub.compat import mx

#: names of BatchNorm's running statistics (SyncBatchNorm's included)
RUNNING_STATS = ("running_mean", "running_var", "moving_mean", "moving_var")


def build_ours(name: str, **kwargs: Any) -> Any:
    """Our model of a registered name, built by its factory with the spec's kwargs and ``kwargs``."""
    spec = gluon_hub.info(name)
    module, _, attr = spec.factory.partition(":")
    return getattr(importlib.import_module(module), attr)(**{**spec.kwargs, **kwargs})


def structure(net: Any, size: int) -> dict[str, tuple[int, ...]]:
    """Structural parameter name -> shape, by symbolic shape inference (nothing allocated)."""
    out = net(mx.sym.var("data"))
    out = mx.sym.Group(list(out)) if isinstance(out, (list, tuple)) else out
    args, _, aux = out.infer_shape(data=(1, 3, size, size))
    shapes = {**dict(zip(out.list_arguments(), args)), **dict(zip(out.list_auxiliary_states(), aux))}
    return {key: tuple(shapes[p.name]) for key, p in net._collect_params_with_prefix().items()}


def structure_and_output(net: Any, data_shape: tuple[int, ...]) -> tuple[dict[str, tuple[int, ...]], tuple[int, ...]]:
    """Structural parameter name -> shape, and the output's shape, by symbolic shape inference
    on one input of ``data_shape`` (nothing allocated)."""
    out = net(mx.sym.var("data"))
    args, outputs, aux = out.infer_shape(data=data_shape)
    shapes = {**dict(zip(out.list_arguments(), args)), **dict(zip(out.list_auxiliary_states(), aux))}
    return {k: tuple(shapes[p.name]) for k, p in net._collect_params_with_prefix().items()}, tuple(outputs[0])


def randomize(net: Any, seed: int) -> None:
    """Random values for every parameter but constants (stored anchors): norm scales and
    variances positive, weights scaled by ``fan_in ** -0.5`` so activations stay finite."""
    mx.random.seed(seed)
    for name, param in sorted(net.collect_params().items()):
        if isinstance(param, mx.gluon.Constant):
            continue
        shape = param.shape
        if name.endswith(("gamma", "running_var", "moving_var")):
            value = mx.nd.random.uniform(0.5, 1.5, shape)
        elif name.endswith(("beta", "running_mean", "moving_mean", "bias")):
            value = mx.nd.random.uniform(-0.2, 0.2, shape)
        else:
            value = mx.nd.random.normal(0, float(np.prod(shape[1:])) ** -0.5, shape)
        param.set_data(value)


def assert_same(actual: Any, expected: Any, rtol: float = 1e-5) -> None:
    """Equal up to float rounding, relative to the largest expected value."""
    expected = expected.asnumpy()
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(actual.asnumpy(), expected, rtol=rtol, atol=rtol * scale)


def random_input(batch: int, size: tuple[int, int]) -> Any:
    return mx.nd.array(np.random.RandomState(1).uniform(-1, 1, (batch, 3, *size)))


def running_stats(net: Any) -> dict[str, np.ndarray]:
    return {k: p.data().asnumpy() for k, p in net._collect_params_with_prefix().items()
            if k.endswith(RUNNING_STATS)}


def learnable_count(net: Any, shapes: dict[str, tuple[int, ...]]) -> int:
    """How many numbers of ``net`` train (``grad_req`` not null), from structural ``shapes``;
    a parameter held under two names (GluonCV's I3D, Monodepth2) counts once."""
    learnable = {id(p): k for k, p in net._collect_params_with_prefix().items() if p.grad_req != "null"}
    return sum(int(np.prod(shapes[k])) for k in learnable.values())


def assert_same_structure(ours: Any, reference: Any, data_shape: tuple[int, ...], spec: Any) -> None:
    """Ours has GluonCV's parameter names, in its order, with its shapes, gives its output
    shape (the spec's, for the batch of ``data_shape``), and trains the spec's parameter count."""
    expected, expected_out = structure_and_output(reference, data_shape)
    actual, actual_out = structure_and_output(ours, data_shape)
    assert sorted(actual) == sorted(expected)
    assert actual == expected
    assert actual_out == expected_out == (data_shape[0], *spec.output_shape)
    assert learnable_count(ours, actual) == spec.num_params


def assert_gluoncv_file(spec: Any, name: str, sha1: str, tag: str | None = None) -> None:
    """The spec's default weights are the file GluonCV publishes for ``name`` (under ``tag``
    when one is given)."""
    variant = spec.weight()
    assert variant.file.hash == f"sha1:{sha1}"
    assert variant.file.filename == f"gluon/models/{name}-{sha1[:8]}.zip"
    assert variant.file.extract == f"{name}-{sha1[:8]}.params"
    assert tag is None or variant.tag == tag


def assert_same_training_state(reference: Any, ours: Any, before: dict[str, np.ndarray],
                               moved: set[str] | None = None, grads_of: Callable[[str], bool] = lambda key: True
                               ) -> None:
    """After one training step of each model: the same BatchNorm statistics, which moved from
    ``before`` (every one, or exactly ``moved``), and the same gradient for every learnable
    parameter that ``grads_of(key)`` keeps."""
    after, ours_after = running_stats(reference), running_stats(ours)
    assert ours_after.keys() == after.keys()
    assert {k for k in after if not np.allclose(before[k], after[k])} == (set(after) if moved is None else moved)
    for key in after:
        np.testing.assert_allclose(ours_after[key], after[key], rtol=1e-4, atol=1e-5, err_msg=key)
    ours_params = ours._collect_params_with_prefix()
    expected = {key: param.grad().asnumpy() for key, param in reference._collect_params_with_prefix().items()
                if param.grad_req != "null" and grads_of(key)}
    # a gradient that cancels to zero (a shift that a later BatchNorm removes) is float32
    # rounding noise on both sides: below a millionth of the model's largest gradient, any
    # two values agree
    noise = 1e-6 * max(float(np.abs(grad).max()) for grad in expected.values())
    for key, grad in expected.items():
        scale = max(1e-6, float(np.abs(grad).max()))
        np.testing.assert_allclose(ours_params[key].grad().asnumpy(), grad, rtol=1e-3,
                                   atol=max(1e-3 * scale, noise), err_msg=key)


def flat(outputs: Any) -> list:
    """Nested output lists and tuples as one list of arrays."""
    items = []
    for item in outputs:
        items.extend(flat(item) if isinstance(item, (list, tuple)) else [item])
    return items


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Answers 404 to everything and records which files were asked for."""

    paths: list[str]

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.paths.append(self.path)
        self.send_error(404)

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def empty_mirror(monkeypatch: Any, tmp_path: Path) -> Iterator[list[str]]:
    """A loopback mirror with no files, the only one the cache (fresh, online) may use;
    yields the list of paths asked of it, so a test sees which files a build fetches."""
    paths: list[str] = []
    handler = type("Recorder", (_Recorder,), {"paths": paths})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("GLUON_HUB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GLUON_HUB_MIRRORS", f"http://127.0.0.1:{server.server_address[1]}/")
    monkeypatch.delenv("GLUON_HUB_OFFLINE", raising=False)
    try:
        yield paths
    finally:
        server.shutdown()
        server.server_close()


def exported_and_reloaded(net: Any, x: Any, folder: Path, name: str) -> tuple[Any, Any]:
    """``(outputs of the hybridized net, outputs of its exported symbol file reloaded)``."""
    net.hybridize()
    expected = net(x)
    net.export(str(folder / name))
    loaded = mx.gluon.SymbolBlock.imports(str(folder / f"{name}-symbol.json"), ["data"],
                                          str(folder / f"{name}-0000.params"))
    return expected, loaded(x)


#: the classes of :func:`write_shapes_voc`'s toy dataset
SHAPE_CLASSES = ("square", "bar")


def write_shapes_voc(root: Path, count: int = 8, size: tuple[int, int] = (96, 80), seed: int = 0,
                     segments: tuple[str, ...] = ("train", "val")) -> Path:
    """A tiny learnable detection dataset in the real VOC layout, for training tests.

    ``root/shapes/{Annotations,ImageSets/Main,JPEGImages}``: ``count`` JPEG images of
    ``size`` (width, height), each with one to three bright shapes on a dark noisy
    background, a ``square`` (filled) or a ``bar`` (wide, hollow); every segment lists
    every image. Read it with
    ``VOCDetection(root, splits=[("shapes", "train")], classes=SHAPE_CLASSES)``.
    """
    from PIL import Image

    rng = np.random.RandomState(seed)
    folder = root / "shapes"
    for sub in ("Annotations", "ImageSets/Main", "JPEGImages"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    width, height = size
    ids = []
    for k in range(count):
        pixels = rng.randint(0, 60, (height, width, 3)).astype(np.uint8)
        objects = []
        for _ in range(rng.randint(1, 4)):
            name = SHAPE_CLASSES[rng.randint(2)]
            w = rng.randint(width // 5, width // 2)
            h = w if name == "square" else max(4, w // 3)
            x1, y1 = rng.randint(0, width - w), rng.randint(0, height - h)
            colour = rng.randint(150, 256, 3)
            if name == "square":
                pixels[y1:y1 + h, x1:x1 + w] = colour
            else:
                pixels[y1:y1 + h, x1:x1 + w] = colour
                pixels[y1 + 2:y1 + h - 2, x1 + 2:x1 + w - 2] = rng.randint(0, 60, 3)
            objects.append(f"<object><name>{name}</name><difficult>0</difficult><bndbox><xmin>{x1 + 1}</xmin>"
                           f"<ymin>{y1 + 1}</ymin><xmax>{x1 + w}</xmax><ymax>{y1 + h}</ymax></bndbox></object>")
        image_id = f"{k:06d}"
        Image.fromarray(pixels).save(folder / "JPEGImages" / f"{image_id}.jpg", format="JPEG", quality=95)
        (folder / "Annotations" / f"{image_id}.xml").write_text(
            f"<annotation><size><width>{width}</width><height>{height}</height><depth>3</depth></size>"
            + "".join(objects) + "</annotation>")
        ids.append(image_id)
    for segment in segments:
        (folder / "ImageSets" / "Main" / f"{segment}.txt").write_text("".join(f"{i}\n" for i in ids))
    return root


def train_steps(recipe: Any, loader: Any, trainer: Any, steps: int) -> np.ndarray:
    """Run ``steps`` training steps of ``recipe`` over ``loader`` (cycled); returns the
    ``(steps, losses)`` values of each step, in ``recipe.loss_names`` order."""
    history: list[list[float]] = []
    while len(history) < steps:
        for batch in loader:
            with mx.autograd.record():
                losses = recipe.losses(batch)
            mx.autograd.backward(losses)
            trainer.step(1)
            history.append([float(loss.asscalar()) for loss in losses])
            if len(history) == steps:
                break
    return np.array(history)


def strictly_loaded(net: Any, path: str) -> Any:
    """``net`` with every parameter loaded from ``path``: none missing, none extra."""
    net.load_parameters(path, allow_missing=False, ignore_extra=False)
    return net


def random_params_files(tmp_path_factory: Any, warmed_reference: Callable[[str], Any]) -> Callable[[str], str]:
    """``save(name)``: a file of random parameters (:func:`randomize`, seed 0) written by the
    GluonCV model ``warmed_reference(name)`` returns, already run once so its shapes are
    known; made once per name."""
    files: dict[str, str] = {}
    folder = tmp_path_factory.mktemp("params")

    def save(name: str) -> str:
        if name not in files:
            reference = warmed_reference(name)
            randomize(reference, seed=0)
            files[name] = str(folder / f"{name}.params")
            reference.save_parameters(files[name])
        return files[name]

    return save


@contextlib.contextmanager
def roialign_without_negative_batch_indices():
    """GluonCV's FPN pools each level with the regions of other levels at batch index -1.
    MXNet 1.9's CPU ROIAlign mishandles those (their rows stay uninitialized and other
    regions' outputs get overwritten), so the reference would be wrong and vary run to run.
    While it runs, such regions are pooled from image 0 and zeroed: what GluonCV intends."""
    original = mx.nd.contrib.ROIAlign

    def fixed(data, rois, *args, **kwargs):
        valid = rois.slice_axis(axis=1, begin=0, end=1).reshape((-1,)) >= 0
        safe = mx.nd.concat(mx.nd.zeros_like(rois.slice_axis(axis=1, begin=0, end=1)),
                            rois.slice_axis(axis=1, begin=1, end=None), dim=1)
        out = original(data, mx.nd.where(valid, rois, safe), *args, **kwargs)
        return mx.nd.where(valid, out, mx.nd.zeros_like(out))

    mx.nd.contrib.ROIAlign = fixed
    try:
        yield
    finally:
        mx.nd.contrib.ROIAlign = original


_syncbn_builds = iter(range(1 << 30))


@contextlib.contextmanager
def gluoncv_names_with_private_syncbn_state() -> Iterator[None]:
    """Build GluonCV's models with layer names counted from zero (its symbolic parts name
    parameters by a per-process counter, and ours must match them), while every
    SyncBatchNorm built gets a key of its own. MXNet keeps each key's statistics buffer for
    the whole process, sized by the first layer that used it: two models whose names restart
    from zero would otherwise share keys like ``resnetv1b0_layers1_syncbatchnorm2_`` across
    tests, and a later model with other widths fails inside MXNet (256 vs 64 channels)."""
    layer = mx.gluon.contrib.nn.SyncBatchNorm
    original = layer.__init__

    def private_key(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self._kwargs["key"] = f"{self._kwargs['key']}build{next(_syncbn_builds)}_"

    layer.__init__ = private_key
    try:
        with mx.name.NameManager():
            yield
    finally:
        layer.__init__ = original
