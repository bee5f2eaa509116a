"""The main job's own model: a small CNN for the UCI handwritten digits.

The data (1,797 real 8x8 scans of digits by 43 writers) ships inside scikit-learn, so
nothing is downloaded. The main job plays a third party here: it trains the model,
publishes its weights, and registers a plugin whose spec carries them. MXNet is imported
only where a network is built or run, so the plugin and the data also serve a process
without MXNet (the main job's ONNX check).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from gluon_hub import InputSpec, Metric, ModelSpec, hookimpl

if TYPE_CHECKING:
    from gluon_hub.compat import mx

DATASET = "UCI handwritten digits (scikit-learn load_digits)"
SPLIT = "test (360 images, fixed seed 0)"


def digits_cnn(classes: int = 10) -> mx.gluon.HybridBlock:
    """Two 3x3 convolutions, a pooling step and two dense layers: about 30k parameters."""
    from gluon_hub.compat import mx

    nn = mx.gluon.nn
    net = nn.HybridSequential()
    net.add(
        nn.Conv2D(16, 3, padding=1, activation="relu"),
        nn.Conv2D(32, 3, padding=1, activation="relu"),
        nn.MaxPool2D(2),
        nn.Flatten(),
        nn.Dense(64, activation="relu"),
        nn.Dropout(0.2),
        nn.Dense(classes),
    )
    return net


def digits_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Train and test arrays, images scaled to [0, 1] as (N, 1, 8, 8)."""
    from sklearn.datasets import load_digits

    data = load_digits()
    images = (data.images / 16.0).astype("float32")[:, None]
    order = np.random.RandomState(0).permutation(len(images))
    test, train = order[:360], order[360:]
    return images[train], data.target[train], images[test], data.target[test]


def logits(net: mx.gluon.Block, images: np.ndarray) -> np.ndarray:
    from gluon_hub.compat import mx

    return net(mx.nd.array(images)).asnumpy()


def accuracy(net: mx.gluon.Block, images: np.ndarray, labels: np.ndarray) -> float:
    return float((logits(net, images).argmax(axis=1) == labels).mean())


def train(seconds: float = 60.0, epochs: int = 30, seed: int = 0) -> tuple[mx.gluon.Block, float, int]:
    """Train until ``epochs`` or ``seconds`` run out; returns net, test accuracy, epochs."""
    from gluon_hub.compat import mx

    mx.random.seed(seed)
    np.random.seed(seed)
    x_train, y_train, x_test, y_test = digits_split()
    net = digits_cnn()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 2e-3})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    loader = mx.gluon.data.DataLoader(
        mx.gluon.data.ArrayDataset(x_train, y_train.astype("float32")), batch_size=64, shuffle=True
    )
    start = time.perf_counter()
    done = 0
    while done < epochs and time.perf_counter() - start < seconds:
        total = 0.0
        for x, y in loader:
            with mx.autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(x.shape[0])
            total += float(loss.sum().asscalar())
        done += 1
        print(f"  epoch {done:2d}  loss {total / len(x_train):.4f}", flush=True)
    return net, accuracy(net, x_test, y_test), done


def metric(value: float) -> Metric:
    return Metric(name="accuracy", value=round(value, 6), dataset=DATASET, split=SPLIT,
                  source="gluon_hub main job")


class DigitsPlugin:
    """An in-process plugin whose spec carries the weights published by the main job."""

    GLUON_HUB_API = ">=1,<2"

    def __init__(self, weights_index: Path) -> None:
        from gluon_hub.publishing import weights_from_index

        self._weights = weights_from_index(weights_index)["digits_cnn"]

    @hookimpl
    def gluon_hub_models(self):
        return [
            ModelSpec(
                name="digits_cnn",
                factory="digits_demo:digits_cnn",
                # the vision plugin's classifier runs the converted graph without MXNet
                runner="gluon_cv_core.classification.onnx_runner:Classifier",
                task="image-classification",
                description="small CNN for 8x8 handwritten digits, trained by the main job",
                input=InputSpec(shape=(1, 8, 8), layout="NCHW", num_classes=10),
                output_shape=(10,),
                weights=self._weights,
                license="Apache-2.0",
            )
        ]


def evaluate_published(weights_index: Path) -> float:
    """Load ``digits_cnn`` by name with its published weights and measure test accuracy."""
    import gluon_hub

    gluon_hub.register_plugin(DigitsPlugin(weights_index), "main-job")
    net = gluon_hub.load("digits_cnn", pretrained=True)
    _, _, x_test, y_test = digits_split()
    return accuracy(net, x_test, y_test)
