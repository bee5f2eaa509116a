"""The action training script end to end on generated videos: the loss goes down, weights are saved."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from gluon_cv_core.action.train import build_parser, main, train


def _videos(folder: Path) -> Path:
    """Four 12-frame videos of two classes (a red or a blue field with a moving bar) and their list file."""
    lines = []
    for index in range(4):
        label = index % 2
        path = folder / f"v{index}.mp4"
        writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 10, (64, 48))
        for i in range(12):
            frame = np.full((48, 64, 3), 40, np.uint8)
            frame[:, :, 2 if label else 0] = 230
            frame[:, (i * 4 + index * 7) % 56:(i * 4 + index * 7) % 56 + 8] = 255
            writer.write(frame)
        writer.release()
        lines.append(f"{path.name} 12 {label}")
    listing = folder / "train.txt"
    listing.write_text("\n".join(lines) + "\n")
    return listing


def test_tsn_training_lowers_the_loss_and_saves(tmp_path: Path) -> None:
    listing = _videos(tmp_path)
    args = build_parser().parse_args([
        "--model", "resnet18_v1b_custom", "--train-list", str(listing), "--val-list", str(listing),
        "--data-dir", str(tmp_path), "--num-classes", "2", "--num-segments", "2", "--new-width", "-1",
        "--new-height", "-1", "--input-size", "32", "--batch-size", "4", "-j", "0", "--num-epochs", "5",
        "--lr", "0.05", "--warmup-epochs", "1", "--lr-mode", "cosine", "--log-interval", "0",
        "--save-dir", str(tmp_path / "runs"), "--seed", "1"])
    history = train(args)
    assert len(history) == 5
    assert history[-1]["loss"] < 0.7 * history[0]["loss"], [h["loss"] for h in history]
    assert 0.0 <= history[-1]["val_top1"] <= 1.0
    assert (tmp_path / "runs" / "resnet18_v1b_custom-0005.params").is_file()


def test_3d_training_fits_the_clips_and_saves(tmp_path: Path) -> None:
    """A clip network (R(2+1)D ResNet-18, from scratch) through the same script: 8-frame
    clips, BatchNorm3D training on the CPU. One batch of four an epoch makes its loss jumpy,
    so the test asks that it fits the clips at some epoch, not that every epoch improves."""
    import math

    import gluon_hub

    listing = _videos(tmp_path)
    args = build_parser().parse_args([
        "--model", "r2plus1d_resnet18_kinetics400", "--train-list", str(listing), "--val-list", str(listing),
        "--data-dir", str(tmp_path), "--num-classes", "2", "--new-length", "8", "--new-width", "-1",
        "--new-height", "-1", "--input-size", "32", "--batch-size", "4", "-j", "0", "--num-epochs", "10",
        "--lr", "0.01", "--lr-mode", "step", "--log-interval", "0", "--save-dir", str(tmp_path / "runs"),
        "--seed", "1"])
    losses = [h["loss"] for h in train(args)]
    assert all(math.isfinite(loss) for loss in losses) and len(losses) == 10
    assert min(losses) < 0.5 * losses[0], losses
    saved = gluon_hub.load("r2plus1d_resnet18_kinetics400", nclass=2)
    saved.load_parameters(str(tmp_path / "runs" / "r2plus1d_resnet18_kinetics400-0010.params"),
                          allow_missing=False, ignore_extra=False)


def test_bad_settings_are_reported(tmp_path: Path, capsys) -> None:
    listing = _videos(tmp_path)
    code = main(["--model", "resnet18_v1b_custom", "--train-list", str(listing), "--data-dir", str(tmp_path),
                 "--batch-size", "8", "-j", "0", "--num-classes", "2"])
    assert code == 2 and "do not fill one batch" in capsys.readouterr().err
    assert main(["--model", "resnet18_v1b_custom", "--dataset", "ucf101", "--data-root", str(tmp_path)]) == 2
    assert "crcv.ucf.edu" in capsys.readouterr().err
