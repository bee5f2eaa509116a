"""Quiet by default: loading, running, predicting and a training step print none of MXNet's
internal log lines, while a user's own warnings still show.

Each case runs in a fresh process and reads its real stderr and stdout: MXNet's C++ log lines
(``[12:00:00] src/...``) go to the process's file descriptor 2, not through Python's
``sys.stderr``, so only a subprocess sees them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

#: what MXNet prints about its own internals: C++ log lines, oneDNN and subgraph messages, Gluon's
#: type-inference and double-initialisation warnings
NOISE = re.compile(r"^\[\d\d:\d\d:\d\d\] |MKLDNN|oneDNN|subgraph|Cannot decide type|already initialized",
                   re.IGNORECASE | re.MULTILINE)

CLASSIFIER = """
import gluon_hub
from gluon_hub.compat import mx
net = gluon_hub.load("resnet18_v1")
net(mx.nd.zeros((1, 3, 224, 224))).wait_to_read()
"""

DETECTOR = """
import gluon_hub
from gluon_hub.compat import mx
for name in ("ssd_512_resnet50_v1_voc", "yolo3_mobilenet0.25_voc"):
    net = gluon_hub.load(name)
    net.hybridize()
    [out.wait_to_read() for out in net(mx.nd.zeros((1, 3, 256, 256)))]
"""

TRAINING_STEP = """
import gluon_hub
from gluon_hub.compat import mx
net = gluon_hub.load("resnet18_v1", classes=4)
net.hybridize()
trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
with mx.autograd.record():
    loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()(net(mx.nd.random.uniform(shape=(2, 3, 64, 64))),
                                                   mx.nd.array([1, 3]))
loss.backward()
trainer.step(2)
mx.nd.waitall()
"""

USER_WARNING = """
import warnings
import gluon_hub
from gluon_hub.compat import mx
net = gluon_hub.load("ssd_512_resnet50_v1_voc")
warnings.warn("the user's own warning")
"""


def _run(args: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(args, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.mark.parametrize("code", [CLASSIFIER, DETECTOR, TRAINING_STEP], ids=["classifier", "detector", "training"])
def test_load_forward_and_train_print_no_mxnet_internals(code: str) -> None:
    done = _run([sys.executable, "-c", code])
    assert not NOISE.search(done.stderr + done.stdout), done.stderr[-3000:]


def test_predict_prints_no_mxnet_internals(tmp_path: Path) -> None:
    from PIL import Image

    image = tmp_path / "photo.jpg"
    Image.new("RGB", (320, 240), (120, 60, 30)).save(image)
    done = _run([sys.executable, "-m", "gluon_hub", "predict", "ssd_512_resnet50_v1_voc", str(image),
                 "--random-weights"])
    assert not NOISE.search(done.stderr + done.stdout), done.stderr[-3000:]


def test_a_users_own_warning_still_shows() -> None:
    done = _run([sys.executable, "-c", USER_WARNING])
    assert "UserWarning: the user's own warning" in done.stderr
    assert not NOISE.search(done.stderr)
