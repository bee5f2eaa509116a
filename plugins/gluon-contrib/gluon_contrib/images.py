"""Reading, augmenting and writing RGB images as CycleGAN sees them: NCHW in [-1, 1]."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from gluon_hub.compat import mx

__all__ = ["IMAGE_SUFFIXES", "list_images", "load_image", "to_array", "save_image"]

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".webp", ".tif", ".tiff")


def list_images(folder: str | Path) -> list[Path]:
    """The image files directly in ``folder``, sorted; raises when there are none."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"image folder {str(folder)!r} does not exist")
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise FileNotFoundError(
            f"no images ({', '.join(IMAGE_SUFFIXES)}) in {str(folder)!r}"
        )
    return files


def load_image(
    path: str | Path, size: int, load_size: int | None = None, rng: random.Random | None = None
):
    """An image as a ``(1, 3, size, size)`` array in [-1, 1].

    With ``rng``, it is resized to ``load_size``, randomly cropped to ``size`` and
    randomly mirrored (the paper's training augmentation); without, resized to ``size``.
    """
    from PIL import Image

    with Image.open(path) as image:
        image = image.convert("RGB")
        if rng is None:
            image = image.resize((size, size), Image.BICUBIC)
        else:
            load_size = load_size or size
            if load_size < size:
                raise ValueError(f"load_size {load_size} is smaller than the crop size {size}")
            image = image.resize((load_size, load_size), Image.BICUBIC)
            x, y = rng.randint(0, load_size - size), rng.randint(0, load_size - size)
            image = image.crop((x, y, x + size, y + size))
            if rng.random() < 0.5:
                image = image.transpose(Image.FLIP_LEFT_RIGHT)
        pixels = np.asarray(image, dtype=np.float32)
    return to_array(pixels)


def to_array(pixels: np.ndarray):
    """``(H, W, 3)`` pixels in 0..255 to a ``(1, 3, H, W)`` array in [-1, 1]."""
    return mx.nd.array(pixels.transpose(2, 0, 1)[None] / 127.5 - 1.0)


def save_image(array, path: str | Path) -> Path:
    """Write a ``(3, H, W)`` or ``(1, 3, H, W)`` array in [-1, 1] as an image file; the
    format follows the suffix."""
    from PIL import Image

    data = array.asnumpy() if hasattr(array, "asnumpy") else np.asarray(array)
    if data.ndim == 4:
        data = data[0]
    pixels = np.clip((data.transpose(1, 2, 0) + 1.0) * 127.5, 0, 255).round().astype(np.uint8)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path)
    return path
