"""Writing a deployment project: the exported model, its manifest, the program and its scripts."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import weakref
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

from gluon_hub.specs import ModelSpec

__all__ = ["LANGUAGES", "deploy", "mxnet_library_dir"]

#: The languages a project can be written in, and the files of each besides ``env.sh``.
_PROGRAMS = {
    "cpp": ("predict.cpp", "build.sh", "run"),
    "java": ("Predict.java", "build.sh", "run"),
    "clojure": ("predict.clj", "build.sh", "run"),
}
LANGUAGES: tuple[str, ...] = tuple(_PROGRAMS)
_PREFIX = "model"
_HEADER = Path("include", "mxnet", "c_predict_api.h")


def mxnet_library_dir() -> Path:
    """The folder of the installed ``mxnet`` wheel, which holds ``libmxnet.so`` and its headers.

    Found without importing mxnet, so a project can be written (and its scripts pointed at
    the library) from the wheel's files alone.
    """
    spec = importlib.util.find_spec("mxnet")
    if spec is None or not spec.origin:
        raise ImportError('deploy needs MXNet: pip install "mxnet==1.9.1" (the [mxnet] extra of gluon-hub)')
    folder = Path(spec.origin).parent
    if not (folder / "libmxnet.so").is_file():
        raise ImportError(f"the mxnet package at {folder} has no libmxnet.so; install the mxnet wheel (1.9.1) from PyPI")
    return folder


def deploy(
    model: str | Any,
    out: str | os.PathLike[str],
    lang: str,
    *,
    pretrained: bool | str = False,
    params: str | os.PathLike[str] | None = None,
    input_shape: Sequence[int] | Sequence[Sequence[int]] | None = None,
    **kwargs: Any,
) -> Path:
    """Write a project that runs ``model`` from C++, Java or Clojure; return its folder.

    The folder gets the exported ``model-symbol.json`` and ``model-0000.params``, a
    ``model.txt`` manifest (inputs, outputs, image preprocessing), ``labels.txt`` for a
    classifier, the program, ``build.sh`` and ``run``. ``DIR/build.sh && DIR/run INPUT``
    then prints the outputs as JSON, with no Python involved.

    Parameters
    ----------
    model : a model name, or an initialised ``HybridBlock`` (then ``input_shape`` is
        needed and ``run`` takes ``.f32`` tensors only: no spec gives preprocessing).
    out : the project folder; created, or an earlier project there is replaced.
    lang : one of :data:`LANGUAGES`.
    pretrained : with a name, the weights to load (see :func:`gluon_hub.load`).
    params : with a name, a ``.params`` file (``net.save_parameters``) to load instead.
    input_shape : each input's shape with the batch axis; default batch 1 of the spec's.
    **kwargs : passed to the model's factory.
    """
    if lang not in _PROGRAMS:
        raise ValueError(f"unknown language {lang!r}; choose one of {', '.join(LANGUAGES)}")
    library = mxnet_library_dir()
    header = library / _HEADER
    if not header.is_file():
        raise ImportError(f"the mxnet wheel at {library} ships no {_HEADER}; install the mxnet 1.9.1 wheel from PyPI")
    target = Path(out).expanduser()
    _check_folder(target)  # before the model is built: a wrong folder fails fast
    net, spec, shapes = _build(model, pretrained, params, input_shape, kwargs)
    _check_hybridizable(net)
    _clear_folder(target)

    from gluon_hub.compat import mx

    from ._export import export

    label = f"model {spec.qualified_name!r}" if spec is not None else type(net).__name__
    try:
        export(net, target / _PREFIX, input_shape=shapes, dtype=["float32"] * len(shapes))
    except Exception as exc:  # whatever a layer's hybrid_forward raised on symbols: name the layer
        layer = _failing_layer(mx, exc)
        raise ValueError(f"cannot export {label}: {layer}failed while its graph was traced "
                         f"({type(exc).__name__}: {exc}); every layer must hybridize (only F.* operators "
                         "in hybrid_forward, no NDArray methods such as asnumpy)") from exc
    inputs, outputs = _graph(mx, target, shapes, label)

    lines = ["# gluon-hub deploy manifest: one 'key value ...' per line", f"model {spec.qualified_name if spec else label}",
             f"symbol {_PREFIX}-symbol.json", f"params {_PREFIX}-0000.params"]
    lines += [f"input {name} {' '.join(map(str, shape))}" for name, shape in zip(inputs, shapes)]
    lines.append(f"outputs {len(outputs)}")
    lines += [f"output {i} {' '.join(map(str, shape))}" for i, shape in enumerate(outputs)]
    lines += _image_lines(spec, shapes)
    labels = _labels(spec, outputs)
    if labels is not None:
        (target / "labels.txt").write_text("".join(f"{name}\n" for name in labels), encoding="utf-8")
        lines.append("labels labels.txt")
    (target / "model.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _write_program(target, lang, library, header)
    return target


def _check_folder(target: Path) -> None:
    """Refuse a file, or a folder holding anything but an earlier project (which is replaced)."""
    if target.exists() and not target.is_dir():
        raise FileExistsError(f"{target} is a file; give a folder for the project")
    if target.is_dir() and any(target.iterdir()) and not (target / "model.txt").is_file():
        raise FileExistsError(f"{target} is not empty and holds no earlier deploy project; choose a new or empty folder")


def _clear_folder(target: Path) -> None:
    """Create ``target``, removing what an earlier project (another model or language) wrote."""
    target.mkdir(parents=True, exist_ok=True)
    generated = {name for files in _PROGRAMS.values() for name in files}
    for stale in (*generated, "env.sh", "labels.txt", "predict", "classes", "include"):
        path = target / stale
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()


def _build(model: Any, pretrained: bool | str, params: Any, input_shape: Any,
           kwargs: dict[str, Any]) -> tuple[Any, ModelSpec | None, list[tuple[int, ...]]]:
    """The network, its spec (None for a block) and the input shapes to export with."""
    from ._export import _shapes

    if not isinstance(model, str):
        if pretrained is not False or params is not None or kwargs:
            raise TypeError("pretrained, params and factory arguments apply only when model is a name")
        if input_shape is None:
            raise ValueError("pass input_shape=(batch, ...) to deploy a block")
        return model, None, _shapes(input_shape)
    from gluon_hub import info, load

    if params is not None and pretrained is not False:
        raise ValueError("give either pretrained weights or a params file, not both")
    spec = info(model)
    if input_shape is not None:
        shapes = _shapes(input_shape)
    else:
        specs = [s for s in (spec.input, *spec.extra_inputs) if s is not None]
        if not specs or any(not s.shape or any(d is None for d in s.shape) for s in specs):
            found = ", ".join(str(s.shape) for s in specs) or "none"
            raise ValueError(f"model {spec.qualified_name!r} gives no fixed input shape (its inputs: {found}); "
                             "pass one shape per input with the batch axis, e.g. --shape 1,128")
        shapes = [(1, *s.shape) for s in specs]
    net = load(model, pretrained=pretrained, **kwargs)
    if params is not None:
        path = Path(params).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"params file {str(path)!r} does not exist")
        from gluon_hub.cache import check_params_file

        check_params_file(path)  # a crafted header must not reach MXNet's loader
        try:
            net.load_parameters(str(path))
        except (AssertionError, ValueError, RuntimeError) as exc:  # mxnet reports mismatches with assert
            raise ValueError(f"{str(path)!r} does not fit {spec.qualified_name!r}: {exc}") from None
    return net, spec, shapes


def _check_hybridizable(net: Any) -> None:
    """Refuse a network holding a plain ``Block``, naming it: no symbol can record its Python code."""
    from gluon_hub.compat import mx

    if not isinstance(net, mx.gluon.Block):
        raise TypeError(f"expected a Gluon HybridBlock, got {type(net).__name__}")
    found = _plain_layer(mx, net, "")
    if found is not None:
        where, block = found
        layer = f"layer {where!r}" if where else "the model itself"
        raise ValueError(
            f"{layer} ({type(block).__name__}) is a plain Block, not a HybridBlock: its forward runs "
            "Python code that no exported graph records, so C++ and the JVM cannot run it; rewrite it "
            "as a HybridBlock (hybrid_forward with F.* operators)"
        )


def _plain_layer(mx: Any, block: Any, where: str) -> tuple[str, Any] | None:
    """The path and block of the first deepest plain ``Block`` under ``block``, or None."""
    if isinstance(block, mx.gluon.HybridBlock):
        return None
    for name, child in block._children.items():
        child = child() if isinstance(child, weakref.ref) else child  # MXNet 2 keeps weak references
        found = _plain_layer(mx, child, f"{where}{name}.")
        if found is not None:
            return found
    return where.rstrip("."), block


def _failing_layer(mx: Any, exc: BaseException) -> str:
    """``layer NAME (Class) `` for the innermost block whose ``hybrid_forward`` raised, else ``""``."""
    found = ""
    tb = exc.__traceback__
    while tb is not None:
        block = tb.tb_frame.f_locals.get("self")
        if tb.tb_frame.f_code.co_name == "hybrid_forward" and isinstance(block, mx.gluon.Block):
            found = f"layer {block.name!r} ({type(block).__name__}) "
        tb = tb.tb_next
    return found


def _graph(mx: Any, target: Path, shapes: list[tuple[int, ...]], label: str) -> tuple[list[str], list[tuple[int, ...]]]:
    """The exported graph's input names (in call order) and output shapes."""
    symbol = mx.sym.load(str(target / f"{_PREFIX}-symbol.json"))
    stored = {key.split(":", 1)[1] for key in mx.nd.load(str(target / f"{_PREFIX}-0000.params"))}
    names = [n for n in symbol.list_inputs() if n not in stored]
    # Gluon names the inputs data, or data0, data1 ... in call order.
    names.sort(key=lambda n: int(m.group(1)) if (m := re.fullmatch(r"data(\d+)", n)) else -1)
    if len(names) != len(shapes):
        raise ValueError(f"the exported graph of {label} takes {len(names)} inputs ({', '.join(names)}) "
                         f"but {len(shapes)} shapes were given")
    _, outputs, _ = symbol.infer_shape(**dict(zip(names, shapes)))
    return names, [tuple(int(d) for d in shape) for shape in outputs]


def _image_lines(spec: ModelSpec | None, shapes: list[tuple[int, ...]]) -> list[str]:
    """The manifest's image preprocessing, where the first input is one RGB image of the spec."""
    from gluon_hub.runtime import geometry

    if spec is None or spec.input is None or spec.input.dtype != "float32" or len(shapes[0]) != 4:
        return []
    try:
        geo = geometry(spec)
    except ValueError:  # a spec without image geometry (or not CHW): raw tensors only
        return []
    if shapes[0][1:] != (3, geo.crop, geo.crop):
        return []
    lines = [f"image {geo.resize} {geo.crop}"]
    if geo.mean is not None and geo.std is not None:
        lines += ["mean " + " ".join(map(repr, geo.mean)), "std " + " ".join(map(repr, geo.std))]
    return lines


def _labels(spec: ModelSpec | None, outputs: list[tuple[int, ...]]) -> list[str] | None:
    """Class names of a classifier's output (``class <i>`` without the spec's), else None."""
    if spec is None or spec.task != "image-classification" or len(outputs[0]) != 2:
        return None
    count = outputs[0][1]
    names = spec.class_names(count)
    if any("\n" in n for n in names):  # one name per line of labels.txt
        names = [f"class {i}" for i in range(count)]
    return names


def _write_program(target: Path, lang: str, library: Path, header: Path) -> None:
    templates = resources.files(__package__).joinpath("templates")
    env = templates.joinpath("env.sh").read_text(encoding="utf-8")
    (target / "env.sh").write_text(env.replace("@MXNET_LIB_DIR@", shlex.quote(str(library))), encoding="utf-8")
    for name in _PROGRAMS[lang]:
        path = target / name
        path.write_text(templates.joinpath(lang, name).read_text(encoding="utf-8"), encoding="utf-8")
        if name in ("build.sh", "run"):
            path.chmod(0o755)
    if lang == "cpp":
        (target / _HEADER).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(header, target / _HEADER)
