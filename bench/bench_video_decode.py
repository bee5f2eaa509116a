"""Video clip decoding + sampling throughput: gluon_cv_core's pipeline vs GluonCV's ``VideoClsCustom``.

Both read the same generated video (decord, decoded at 340 x 256, no transform) with the same
sampling, in one run, alternating, and the ratio is printed (goal: at least 1.0)::

    python bench/bench_video_decode.py [--frames 120] [--repeat 20]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np


def _video(path: Path, frames: int) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 25, (320, 240))
    rs = np.random.RandomState(0)
    base = rs.randint(0, 256, (240, 320, 3)).astype(np.uint8)
    for i in range(frames):
        writer.write(np.roll(base, i * 3, axis=1))
    writer.release()
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=120)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    from gluon_cv_core.action.clips import ClipSampler
    from gluon_cv_core.datasets.video import VideoClassification, VideoItem

    from gluoncv.data import VideoClsCustom

    with tempfile.TemporaryDirectory() as folder:
        video = _video(Path(folder) / "bench.mp4", args.frames)
        setting = Path(folder) / "list.txt"
        setting.write_text(f"{video} {args.frames} 0\n")
        for name, sampling in (("i3d f32s2", dict(new_length=32, new_step=2)),
                               ("tsn 8 segments", dict(num_segments=8)),
                               ("10 test clips x 16", dict(num_segments=10, new_length=16))):
            theirs = VideoClsCustom("", str(setting), train=False, test_mode=True, video_loader=True,
                                    use_decord=True, target_width=340, target_height=256,
                                    transform=lambda frames: [np.transpose(f, (2, 0, 1)) for f in frames],
                                    **sampling)
            ours = VideoClassification([VideoItem(str(video), 0)], ClipSampler(**sampling), "test")
            times = {"gluoncv": [], "ours": []}
            for _ in range(args.repeat):
                for key, dataset in (("gluoncv", theirs), ("ours", ours)):
                    tic = time.perf_counter()
                    dataset[0]
                    times[key].append(time.perf_counter() - tic)
            theirs_s, ours_s = np.median(times["gluoncv"]), np.median(times["ours"])
            print(f"{name:>20}: GluonCV {1 / theirs_s:7.1f} clips/s, ours {1 / ours_s:7.1f} clips/s, "
                  f"ratio {theirs_s / ours_s:.2f}x")


if __name__ == "__main__":
    main()
