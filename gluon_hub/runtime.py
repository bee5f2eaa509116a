"""Running an exported classifier with ONNX Runtime, where MXNet is not installed.

A model written by ``gluon_hub.export(name, "model.onnx", format="onnx")`` runs here with
onnxruntime, numpy and Pillow only (``pip install onnxruntime Pillow``); this module
never imports MXNet. The model's name gives its spec, and so the preprocessing it was
trained with and its class names; the spec is read from the plugin's registration, which
imports no model code either.

The preprocessing is the evaluation preset of gluon-cv-core's ``eval_transform``: shorter
side to ``resize`` (bilinear), centre ``crop``, scale to [0, 1], normalise. The resize
reproduces the fixed-point arithmetic of the OpenCV inside MXNet, so a shrunk image is the
same to the bit as on the MXNet path (Pillow decodes; for the same JPEG library that is the
same too), and predictions agree with ``gluon-hub predict`` to float rounding.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .specs import InputSpec, ModelSpec

__all__ = ["Geometry", "OnnxClassifier", "geometry", "load_onnx", "preprocess", "read_image"]

_INSTALL = "pip install onnxruntime Pillow (the [onnxruntime] extra of gluon-hub)"


@dataclass(frozen=True)
class Geometry:
    """The evaluation preprocessing of a model: sizes, channels and normalisation."""

    crop: int
    resize: int
    channels: int
    mean: tuple[float, ...] | None
    std: tuple[float, ...] | None


def geometry(model: str | ModelSpec | InputSpec) -> Geometry:
    """A model's evaluation geometry, from its name, spec or ``InputSpec``.

    ``crop`` is the spec's crop (else its square spatial size), ``resize`` the shorter side
    scaled to first (else the crop); means above 1 are on the 0-255 scale.
    """
    if isinstance(model, str):  # the caller looks a name up, never the spec
        from ._api import input_spec

        model = input_spec(model)
    spec = InputSpec.of(model)
    layout = (spec.layout or "CHW").upper().lstrip("N")
    if layout != "CHW":
        raise ValueError(f"the preprocessing produces CHW images; the model expects layout {spec.layout!r}")
    channels, height, width = spec.shape if spec.shape and len(spec.shape) == 3 else (3, None, None)
    if height is not None and height != width:
        raise ValueError(f"the preprocessing crops squares; input shape {spec.shape} is not square")
    crop = spec.crop or height
    if not crop:
        raise ValueError("the input spec gives neither crop nor a fixed spatial shape")
    resize = spec.resize or crop
    if resize < crop:
        raise ValueError(f"input spec resize={resize} is smaller than crop={crop}")
    if (spec.mean is None) != (spec.std is None):
        raise ValueError("the input spec must give both mean and std, or neither")
    mean, std = spec.mean, spec.std
    if mean is not None and std is not None and max(mean) > 1.0:
        mean, std = tuple(m / 255.0 for m in mean), tuple(s / 255.0 for s in std)
    return Geometry(crop=int(crop), resize=int(resize), channels=int(channels or 3), mean=mean, std=std)


def read_image(path: str | os.PathLike[str]) -> np.ndarray:
    """The image at ``path`` as an ``HWC`` ``uint8`` RGB array, decoded by Pillow."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"image {path!r} does not exist")
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:
        raise ImportError(f"reading images for the ONNX runner needs Pillow: {_INSTALL}") from None
    try:
        with Image.open(path) as image:
            return np.asarray(image.convert("RGB"))
    except (UnidentifiedImageError, OSError) as exc:
        raise ValueError(f"cannot decode image {path!r}: {exc}") from None


def preprocess(image: np.ndarray, model: str | ModelSpec | InputSpec | Geometry) -> np.ndarray:
    """One ``HWC`` ``uint8`` RGB image as the ``CHW`` ``float32`` tensor the model takes.

    Examples
    --------
    >>> from gluon_hub import InputSpec
    >>> spec = InputSpec(resize=256, crop=224, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))
    >>> preprocess(np.zeros((300, 400, 3), dtype=np.uint8), spec).shape
    (3, 224, 224)
    """
    geo = model if isinstance(model, Geometry) else geometry(model)
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"expected an HWC uint8 RGB image, got shape {image.shape} and dtype {image.dtype}")
    height, width = image.shape[:2]
    if height <= width:
        size = (geo.resize, width * geo.resize // height)
    else:
        size = (height * geo.resize // width, geo.resize)
    resized = _resize_bilinear(image, *size)
    top, left = (size[0] - geo.crop) // 2, (size[1] - geo.crop) // 2
    if top < 0 or left < 0:
        raise ValueError(f"image of {width}x{height} is too small to crop {geo.crop}x{geo.crop}")
    tensor = resized[top : top + geo.crop, left : left + geo.crop].astype(np.float32) / np.float32(255.0)
    if geo.mean is not None and geo.std is not None:
        tensor = (tensor - np.asarray(geo.mean, np.float32)) / np.asarray(geo.std, np.float32)
    return np.ascontiguousarray(tensor.transpose(2, 0, 1))


class OnnxClassifier:
    """An exported image classifier in an onnxruntime session, with its preprocessing.

    Build it with :func:`load_onnx`. Calling it runs a batch of preprocessed ``NCHW``
    tensors and returns the logits; :meth:`classify` takes image files.
    """

    def __init__(self, session: Any, spec: ModelSpec, path: Path) -> None:
        self.session = session
        self.spec = spec
        self.path = path
        self.geometry = geometry(spec)
        (model_input,) = session.get_inputs()
        self.input_name: str = model_input.name
        #: The batch size fixed in the file, or None where the file leaves it free.
        self.batch: int | None = model_input.shape[0] if isinstance(model_input.shape[0], int) else None
        self._labels: list[str] | None = None

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        """The model's output (logits) for an ``NCHW`` ``float32`` batch."""
        batch = np.ascontiguousarray(batch, dtype=np.float32)
        if self.batch is None or len(batch) == self.batch:
            return self.session.run(None, {self.input_name: batch})[0]
        outputs = []
        for start in range(0, len(batch), self.batch):  # the file's batch size, padded at the end
            chunk = batch[start : start + self.batch]
            padded = np.concatenate([chunk, np.zeros((self.batch - len(chunk), *chunk.shape[1:]), np.float32)])
            outputs.append(self.session.run(None, {self.input_name: padded})[0][: len(chunk)])
        return np.concatenate(outputs)

    def classify(
        self, images: Sequence[str | os.PathLike[str] | np.ndarray], topk: int = 5, batch_size: int = 32
    ) -> list[list[tuple[str, float]]]:
        """The ``topk`` (label, softmax probability) pairs of each image, best first.

        ``images`` are files or ``HWC`` ``uint8`` RGB arrays. Labels are the spec's class
        names, or ``class <i>`` where the model has other classes.
        """
        if topk < 1 or batch_size < 1:
            raise ValueError("topk and batch_size must be at least 1")
        results: list[list[tuple[str, float]]] = []
        for start in range(0, len(images), batch_size):
            chunk = images[start : start + batch_size]
            tensors = [preprocess(read_image(i) if not isinstance(i, np.ndarray) else i, self.geometry)
                       for i in chunk]
            logits = self(np.stack(tensors)).astype(np.float64)
            probs = np.exp(logits - logits.max(axis=1, keepdims=True))
            probs /= probs.sum(axis=1, keepdims=True)
            labels = self.labels(probs.shape[1])
            for row in probs:
                best = row.argsort()[::-1][:topk]
                results.append([(labels[i], float(row[i])) for i in best])
        return results

    def labels(self, num_classes: int) -> list[str]:
        """The spec's class names when it has ``num_classes`` of them, else ``class <i>``."""
        if self._labels is None or len(self._labels) != num_classes:
            self._labels = self.spec.class_names(num_classes)
        return self._labels


def load_onnx(
    path: str | os.PathLike[str],
    model: str,
    *,
    threads: int | None = None,
    providers: Sequence[str] | None = None,
) -> OnnxClassifier:
    """Load an ONNX file exported from the classifier ``model`` into onnxruntime.

    Parameters
    ----------
    path : the file ``gluon_hub.export(model, path, format="onnx")`` wrote.
    model : the model's name: its spec gives the preprocessing and the class names.
    threads : onnxruntime's intra-op threads (default: its own choice).
    providers : onnxruntime execution providers (default: the CPU).
    """
    from ._api import info

    spec = info(model)
    geo = geometry(spec)
    target = Path(path).expanduser()
    if not target.is_file():
        raise FileNotFoundError(
            f"ONNX file {str(target)!r} does not exist; write it where MXNet is installed with "
            f"gluon_hub.export({spec.name!r}, {str(target)!r}, format=\"onnx\")"
        )
    try:
        import onnxruntime
    except ImportError:
        raise ImportError(f"running ONNX models needs onnxruntime: {_INSTALL}") from None
    options = onnxruntime.SessionOptions()
    if threads is not None:
        options.intra_op_num_threads = threads
    try:
        session = onnxruntime.InferenceSession(str(target), options, providers=list(providers or ["CPUExecutionProvider"]))
    except Exception as exc:  # onnxruntime raises its own classes, one per failure
        raise ValueError(f"onnxruntime cannot load {str(target)!r} as an ONNX model: {exc}") from None
    inputs = session.get_inputs()
    expected = (geo.channels, geo.crop, geo.crop)
    shape = tuple(inputs[0].shape) if len(inputs) == 1 else ()
    if len(inputs) != 1 or len(shape) != 4 or shape[1:] != expected:
        found = ", ".join(f"{i.name} {tuple(i.shape)}" for i in inputs)
        raise ValueError(
            f"{str(target)!r} takes {found}, but {spec.qualified_name!r} is preprocessed to "
            f"(batch, {', '.join(map(str, expected))}): the file was exported from another model or "
            f"for another input size; export it again with gluon_hub.export({spec.name!r}, "
            f"{str(target)!r}, format=\"onnx\") (the spec's input shape is the default)"
        )
    if inputs[0].type != "tensor(float)":
        raise ValueError(f"{str(target)!r} takes {inputs[0].type} input; the ONNX runner feeds float32 images")
    return OnnxClassifier(session, spec, target)


def _resize_bilinear(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """Bilinear resize of a ``uint8`` ``HWC`` image with OpenCV's ``INTER_LINEAR`` arithmetic.

    OpenCV (which MXNet's image operators call) rounds the interpolation weights to 11-bit
    fixed point and combines rows with 16-bit multiplies; doing the same makes a shrunk
    image identical to MXNet's, not merely close.
    """
    if (height, width) == image.shape[:2]:
        return image
    x0, x1, a0, a1 = _weights(width, image.shape[1])
    y0, y1, b0, b1 = _weights(height, image.shape[0])
    source = image.astype(np.int32)
    rows = source[:, x0] * a0[None, :, None] + source[:, x1] * a1[None, :, None]  # 2048 x pixel
    top = (b0[:, None, None] * (rows[y0] >> 4)) >> 16
    bottom = (b1[:, None, None] * (rows[y1] >> 4)) >> 16
    return np.clip((top + bottom + 2) >> 2, 0, 255).astype(np.uint8)


def _weights(size_out: int, size_in: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Source indices and 11-bit weights of each output position (pixel centres aligned)."""
    position = ((np.arange(size_out) + 0.5) * (size_in / size_out) - 0.5).astype(np.float32)
    first = np.floor(position).astype(np.int64)
    fraction = (position - first).astype(np.float32)
    outside = (first < 0) | (first >= size_in - 1)
    fraction[outside] = 0.0
    first = np.clip(first, 0, size_in - 1)
    second = np.minimum(first + 1, size_in - 1)
    weight1 = np.rint(fraction * np.float32(2048)).astype(np.int32)
    weight0 = np.rint((np.float32(1) - fraction) * np.float32(2048)).astype(np.int32)
    return first, second, weight0, weight1
