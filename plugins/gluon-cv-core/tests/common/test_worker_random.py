"""Training augmentations draw different numbers in each data-loader worker, repeatably."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from gluon_cv_core.common.worker_random import WorkerRandom
from gluon_cv_core.detection.presets import SSDTrainTransform
from gluon_hub.compat import mx


def _draw(stream: WorkerRandom) -> list[float]:
    return stream.rng.uniform(size=4).tolist()


def test_in_its_own_process_the_stream_is_randomstate_of_its_seed() -> None:
    np.testing.assert_array_equal(_draw(WorkerRandom(7)), np.random.RandomState(7).uniform(size=4))


_TWO_WORKERS = """
import multiprocessing, sys
from gluon_cv_core.common.worker_random import WorkerRandom

def hold(barrier):
    global both_started
    both_started = barrier

def draw(stream):
    both_started.wait()  # each of the two tasks runs in its own worker
    return stream.rng.uniform(size=4).tolist()

if __name__ == "__main__":
    stream, context = WorkerRandom(int(sys.argv[1])), multiprocessing.get_context("fork")
    with context.Pool(2, initializer=hold, initargs=(context.Barrier(2),)) as pool:
        print(sorted(pool.map(draw, [stream, stream], chunksize=1)), stream.rng.uniform(size=4).tolist())
"""


def _run_two_workers(seed: int) -> str:
    return subprocess.run([sys.executable, "-c", _TWO_WORKERS, str(seed)], check=True, capture_output=True,
                          text=True).stdout


def test_forked_workers_draw_distinct_numbers_and_a_seeded_run_repeats() -> None:
    (first_worker, second_worker), parent = eval(_run_two_workers(7).replace("] [", "], ["))
    assert first_worker != second_worker
    assert parent not in (first_worker, second_worker)
    assert _run_two_workers(7) == _run_two_workers(7)
    assert _run_two_workers(7) != _run_two_workers(8)


class _SameImage(mx.gluon.data.Dataset):
    """One generated photo with one box, repeated: only the augmentation can tell items apart."""

    def __init__(self, count: int) -> None:
        rng = np.random.RandomState(0)
        self._image = mx.nd.array(rng.randint(0, 256, (64, 80, 3)), dtype=np.uint8)
        self._label = np.array([[10, 12, 50, 40, 0]], np.float32)
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int):
        return self._image, self._label


def test_data_loader_workers_augment_the_same_image_differently() -> None:
    transform = SSDTrainTransform(48, 48, seed=3)
    data = _SameImage(4).transform(lambda image, label: transform(image, label)[0])
    loader = mx.gluon.data.DataLoader(data, batch_size=1, num_workers=2)
    batches = [batch.asnumpy().tobytes() for batch in loader]
    # both workers start at once; with one stream copied into each, their batches would pair up
    assert len(set(batches)) == len(batches)
