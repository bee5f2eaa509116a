"""Export a classifier to ONNX beside MXNet's answers, for the tests that run without MXNet.

Run where MXNet is installed (``.ci/run``'s Python 3.11 leg)::

    .venv/bin/python scripts/export_onnx_fixtures.py .ci-artifacts/onnx

The folder gets ``cifar_resnet20_v1`` with He-initialised weights (a fixed seed) as an ONNX
file with a free batch axis, three PNG images (the photograph that ships with matplotlib and
two crops of it), MXNet's preprocessing of them for that model and for ``resnet50_v1d``
(shrink and crop), MXNet's outputs, and ``manifest.json`` naming it all. The MXNet-free leg
(Python 3.13, numpy 2) points ``GLUON_HUB_TEST_ONNX_DIR`` at it:
``tests/core/test_runtime_exported_files.py`` checks that ``gluon_hub.runtime`` there gives
the same arrays and ``gluon-hub predict --runtime onnx`` the same classes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from matplotlib import cbook
from PIL import Image

import gluon_hub
from gluon_cv_core.classification.transforms import eval_transform
from gluon_hub.compat import mx

MODEL = "cifar_resnet20_v1"
#: preprocessed by MXNet as well, for the resize-and-crop path the CIFAR model does not take
SHRUNK = "resnet50_v1d"
#: name: (top, left, height, width) of the photograph (600 x 512), None for all of it
CROPS = {"photo.png": None, "face.png": (40, 100, 300, 260), "wide.png": (300, 0, 180, 512)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="where to write the files (created if missing)")
    folder = parser.parse_args(argv).folder
    folder.mkdir(parents=True, exist_ok=True)

    photo = np.asarray(Image.open(cbook.get_sample_data("grace_hopper.jpg", asfileobj=False)).convert("RGB"))
    images = []
    for name, box in CROPS.items():
        top, left, height, width = box or (0, 0, *photo.shape[:2])
        Image.fromarray(photo[top : top + height, left : left + width]).save(folder / name)
        images.append(name)

    def preprocessed(model: str) -> np.ndarray:
        transform = eval_transform(model)
        return np.stack([transform(mx.image.imread(str(folder / name), to_rgb=True)).asnumpy() for name in images])

    mx.random.seed(0)
    net = gluon_hub.load(MODEL)
    net.initialize(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), force_reinit=True)
    inputs = preprocessed(MODEL)
    outputs = net(mx.nd.array(inputs)).asnumpy()
    gluon_hub.export(net, folder / f"{MODEL}.onnx", format="onnx", input_shape=(1, *inputs.shape[1:]),
                     dynamic_batch=True)
    np.save(folder / f"{MODEL}.input.npy", inputs)
    np.save(folder / f"{MODEL}.mxnet.npy", outputs)
    np.save(folder / f"{SHRUNK}.input.npy", preprocessed(SHRUNK))
    manifest = {"model": MODEL, "onnx": f"{MODEL}.onnx", "images": images, "inputs": f"{MODEL}.input.npy",
                "outputs": f"{MODEL}.mxnet.npy", "shrunk": {"model": SHRUNK, "inputs": f"{SHRUNK}.input.npy"},
                "made_with": {"python": sys.version.split()[0], "mxnet": mx.__version__, "numpy": np.__version__}}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"export_onnx_fixtures: {MODEL} and {len(images)} images with MXNet's answers in {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
