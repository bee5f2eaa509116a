"""Images in class folders (the ImageNet layout): ``root/<class name>/<image>``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gluon_hub.compat import mx

from ..common.images import read_image

__all__ = ["IMAGE_EXTENSIONS", "ImageFolderDataset", "imagenet"]

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".pgm", ".tif", ".tiff", ".webp")


class ImageFolderDataset(mx.gluon.data.Dataset):
    """Every image under ``root/<class>/``, labelled by the sorted index of its class folder.

    Items are ``(image, label)``: an ``HWC`` ``uint8`` RGB ``NDArray`` decoded by MXNet's
    OpenCV, and an ``int``. Compose with a preset through ``transform_first``::

        ImageFolderDataset("imagenet/val").transform_first(eval_transform("resnet50_v1d"))

    Files with other extensions and hidden files are ignored; a class folder with no
    images keeps its label, so labels stay aligned with a model's class list.
    """

    def __init__(self, root: str | os.PathLike[str], extensions: tuple[str, ...] = IMAGE_EXTENSIONS) -> None:
        self.root = Path(root).expanduser()
        if not self.root.is_dir():
            raise FileNotFoundError(f"image folder {str(self.root)!r} does not exist or is not a directory")
        self.classes = sorted(p.name for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("."))
        if not self.classes:
            raise ValueError(f"{str(self.root)!r} has no class folders; expected root/<class name>/<image>")
        wanted = tuple(e.lower() for e in extensions)
        self.items: list[tuple[str, int]] = []
        for label, name in enumerate(self.classes):
            for dirpath, dirnames, filenames in os.walk(self.root / name):
                dirnames.sort()
                self.items.extend(
                    (os.path.join(dirpath, f), label)
                    for f in sorted(filenames)
                    if f.lower().endswith(wanted) and not f.startswith(".")
                )
        if not self.items:
            raise ValueError(f"no images ({', '.join(wanted)}) under {str(self.root)!r}")

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> tuple[Any, int]:
        path, label = self.items[index]
        return read_image(path), label


def imagenet(root: str | None = None, segment: str = "train") -> ImageFolderDataset:
    """ILSVRC 2012 prepared in the ImageNet layout, ``root/<segment>/<wnid>/*.JPEG``.

    The images cannot be downloaded for you (their licence requires registering at
    image-net.org); prepare them once and pass the folder as ``root``.
    """
    if root is None:
        raise ValueError(
            "ImageNet must be prepared by hand (download from image-net.org after agreeing to "
            "its terms); pass root=DIR holding DIR/train/<wnid>/*.JPEG and DIR/val/<wnid>/*.JPEG"
        )
    return ImageFolderDataset(Path(root).expanduser() / segment)
