"""Tracking end to end: a generated video of a moving square, decoded by decord, followed by
``gluon-hub predict`` with SiamRPN; and the errors for bad videos and boxes.

Random weights cannot follow anything, so the network gets hand-set weights that make it an
honest (if simple) Siamese matcher, all through its real layers:

* the backbone computes one feature channel, local brightness: every convolution averages its
  input's channel 0 (the first over all three colours, scaled to 0-1), batch norms are identities
  (mean 0, variance 1), all other channels are zero. Its receptive field is about 100 pixels of
  the crop, so the feature is a smooth bump centred on the bright square;
* the head's adaptation convolutions average 3x3 again, so the template's 4x4 kernel is the top
  of that bump, and the depth-wise correlation is largest where the search crop's bump lines up
  with it, that is where the square now is;
* the classifier turns the correlation ``c`` into the target logit ``a * (c - t)`` (background 0)
  for every anchor, with ``t`` just under the template's correlation with itself, so scores fall
  off within a few grid cells of the best match; the box offsets are zero, so each anchor
  proposes its own shape and the scale penalty keeps the square anchor.

Everything else (the crops around the last position, padding, resizing, anchors, penalties,
cosine window, size smoothing, mapping back to frame pixels, decoding the video) is the code
under test: getting any of it wrong loses the square.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from cv_testlib.video import square_at, write_square_video
from PIL import Image

from gluon_cv_core.tracking.models.siamrpn import siamrpn_alexnet_v2_otb15
from gluon_cv_core.tracking.predict import read_frames
from gluon_hub.cli import main as hub_main
from gluon_hub.compat import mx

NAME = "siamrpn_alexnet_v2_otb15"
SIDE, FRAMES = 64, 12  # write_square_video's default frame side and length


def _set(param, value: np.ndarray) -> None:
    param.set_data(mx.nd.array(value))


def brightness_matcher(slope: float = 1.7, threshold: float = 10.5):
    """SiamRPN with the weights the module docstring describes; ``slope`` and ``threshold`` are
    ``a`` and ``t`` (the template's self-correlation is about 11.7 for a bright square)."""
    net = siamrpn_alexnet_v2_otb15()
    net.initialize()
    net(mx.nd.zeros((1, 3, 127, 127)), mx.nd.zeros((1, 3, 287, 287)))
    for name, param in net.collect_params().items():
        _set(param, np.ones(param.shape) if name.endswith(("gamma", "running_var")) else np.zeros(param.shape))
    convs = [layer for layer in net.backbone.features if isinstance(layer, mx.gluon.nn.Conv2D)]
    for i, conv in enumerate(convs):
        weight = np.zeros(conv.weight.shape, np.float32)
        k = weight.shape[2]
        if i == 0:
            weight[0, :] = 1.0 / (255 * 3 * k * k)
        else:
            weight[0, 0] = 1.0 / (k * k)
        _set(conv.weight, weight)
    for branch in (net.rpn_head.cls, net.rpn_head.loc):
        for adapt in (branch.conv_kernel, branch.conv_search):
            weight = np.zeros(adapt[0].weight.shape, np.float32)
            weight[0, 0] = 1.0 / 9
            _set(adapt[0].weight, weight)
        weight = np.zeros(branch.head[0].weight.shape, np.float32)
        weight[0, 0] = 1.0
        _set(branch.head[0].weight, weight)
    classifier = net.rpn_head.cls.head[3]
    weight = np.zeros(classifier.weight.shape, np.float32)
    weight[5:, 0] = slope  # channels 5-9: the target logits of the 5 anchors
    bias = np.zeros(classifier.bias.shape, np.float32)
    bias[5:] = -slope * threshold
    _set(classifier.weight, weight)
    _set(classifier.bias, bias)
    return net


def _iou(a, b) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def test_predict_follows_a_moving_square_through_a_video(tmp_path, capsys) -> None:
    video, params, out = tmp_path / "square.avi", tmp_path / "matcher.params", tmp_path / "last.png"
    write_square_video(video)
    frames = list(read_frames(str(video)))
    assert len(frames) == FRAMES and frames[0].shape == (SIDE, SIDE, 3)
    x0, y0, x1, y1 = square_at(FRAMES - 1)
    assert frames[-1][(y0 + y1) // 2, (x0 + x1) // 2].min() > 180  # decord reads what was written
    brightness_matcher().save_parameters(str(params))

    box = [str(v) for v in square_at(0)]
    assert hub_main(["predict", NAME, str(video), "--params", str(params), "--box", *box,
                     "--json", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["frame"] for r in rows] == list(range(FRAMES))
    assert rows[0]["box"] == [float(v) for v in square_at(0)] and rows[0]["score"] == 1.0
    ious = [_iou(r["box"], square_at(r["frame"])) for r in rows[1:]]
    assert np.mean(np.array(ious) > 0.5) >= 0.9, ious
    # the square travels far: a tracker that stayed put would lose it
    assert np.mean([_iou(square_at(0), square_at(k)) > 0.5 for k in range(1, FRAMES)]) < 0.3
    drawn = np.asarray(Image.open(out))  # the last frame, with its box in yellow
    assert drawn.shape == (SIDE, SIDE, 3)
    assert ((drawn[:, :, 0] > 200) & (drawn[:, :, 1] > 180) & (drawn[:, :, 2] < 80)).sum() > 20

    assert hub_main(["predict", NAME, str(video), "--params", str(params), "--box", *box]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == FRAMES and lines[0].split()[0] == "0" and len(lines[-1].split()) == 6


def test_bad_videos_and_boxes_are_one_line_errors(tmp_path, capsys) -> None:
    missing = tmp_path / "missing.avi"
    assert hub_main(["predict", NAME, str(missing), "--random-weights", "--box", "1", "1", "9", "9"]) == 1
    assert f"video {str(missing)!r} does not exist" in capsys.readouterr().err
    empty = tmp_path / "empty.avi"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="empty.avi"):
        list(read_frames(str(empty)))
    no_frames = tmp_path / "no_frames.avi"
    write_square_video(no_frames, frames=0)
    with pytest.raises(ValueError, match="no_frames.avi"):
        list(read_frames(str(no_frames)))
    assert hub_main(["predict", NAME, str(empty), "--random-weights", "--box", "1", "1", "9", "9"]) == 1
    err = capsys.readouterr().err
    assert "empty.avi" in err and "Traceback" not in err

    video = tmp_path / "square.avi"
    write_square_video(video, frames=2)
    assert hub_main(["predict", NAME, str(video), "--random-weights"]) == 1
    assert "--box X0 Y0 X1 Y1" in capsys.readouterr().err
    assert hub_main(["predict", NAME, str(video), "--random-weights", "--box", "50", "50", "90", "60"]) == 1
    assert "not a box inside the first frame" in capsys.readouterr().err
    assert hub_main(["predict", NAME, str(video), str(video), "--random-weights", "--box", "1", "1", "9", "9"]) == 1
    assert "pass a single VIDEO" in capsys.readouterr().err
