"""``gluon-hub predict MODEL FILE...``: run a model of any of the plugin's tasks on images or videos.

A router: the model's task names the module that predicts with it, each task package's own
(``_TASK_MODULES``), whose ``run(args, spec)`` checks the options it uses and returns the exit
code. Classifiers print each image's top-k classes; detectors and Mask R-CNN print each
image's boxes or instances as JSON and draw them with ``--out FILE.png``; segmentation models
print class pixel fractions and draw a colour overlay; pose estimators print keypoints, action
recognisers the top-k classes of each video, depth models depth statistics, and trackers the
object's box in each frame. ``--runtime onnx [--model-file FILE.onnx]`` runs the exported
model of any of these tasks in onnxruntime (``gluon_hub.runtime.load``, the runner its spec
names), without MXNet, and ``--json`` prints what the MXNet runtime prints.

It never downloads unless asked. By default it uses the model's published weights if they
are already in the cache or on a local mirror, and otherwise stops and says how to get
them: ``--pretrained`` downloads them, ``--params FILE`` loads a local file, and
``--random-weights`` runs the untrained network (its labels are meaningless).
"""

from __future__ import annotations

import argparse
import importlib
from typing import Sequence

#: task -> the module (in this package) whose ``run(args, spec) -> exit code`` predicts with its models
_TASK_MODULES = {
    "image-classification": "classification.predict",
    "object-detection": "detection.predict",
    "instance-segmentation": "detection.instance_predict",
    "semantic-segmentation": "segmentation.predict",
    "pose-estimation": "pose.predict",
    "action-recognition": "action.predict",
    "depth-estimation": "depth.predict",
    "object-tracking": "tracking.predict",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gluon-hub predict",
        description="Classify images with an image-classification model and print the top-k classes; "
        "with an object detector, print the boxes of each image as JSON (and draw them with --out); "
        "with a segmentation model, print class pixel fractions or instances (--out draws the masks); "
        "with a pose model, the keypoints of each person; with an action model, the top-k classes of "
        "each video; with a depth model, depth statistics (--out draws the depth map); with a tracker, "
        "the object's box in each frame of a video (--box gives it in the first).",
    )
    parser.add_argument("model", help="model name, for example resnet50_v1d")
    parser.add_argument("images", nargs="+", metavar="IMAGE",
                        help="image files (JPEG, PNG ...); video files for action recognition and tracking")
    parser.add_argument("-k", "--topk", type=int, default=5, help="how many classes to print (default 5)")
    weights = parser.add_mutually_exclusive_group()
    weights.add_argument(
        "--pretrained",
        nargs="?",
        const=True,
        default=None,
        metavar="TAG",
        help="use the published weights (the default ones, or those tagged TAG), downloading "
        "them if they are not cached. Without any weights option, the published weights are "
        "used only if already cached or on a local mirror: nothing is downloaded",
    )
    weights.add_argument("--tag", dest="pretrained", metavar="TAG", help="same as --pretrained TAG")
    weights.add_argument("--params", metavar="FILE", help="load weights from a local .params file instead")
    weights.add_argument("--random-weights", action="store_true",
                         help="run the randomly initialised network (to try the command; the "
                         "labels are then meaningless)")
    names = parser.add_mutually_exclusive_group()
    names.add_argument("--classes", type=_class_names, metavar="A,B,C",
                       help="the class names of a --params file trained on other classes, in label order "
                       "(comma-separated; a bare number N prints 'class 0' ... 'class N-1')")
    names.add_argument("--classes-file", metavar="FILE",
                       help="the same as --classes, one name a line (the labels.txt the training script writes)")
    parser.add_argument("--batch-size", type=int, default=32, help="images per forward pass (default 32)")
    parser.add_argument("--ctx", default="cpu", help="device, for example cpu or gpu0 (default cpu)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per image")
    parser.add_argument("--threshold", type=float, default=0.5,
                        help="detectors and Mask R-CNN: print boxes scoring at least this (default 0.5)")
    parser.add_argument("--out", metavar="FILE.png",
                        help="write a picture of the (single) input: boxes (detectors), masks (segmentation), "
                        "skeletons (pose), a colour depth map (depth), or the last frame with its box (tracking)")
    parser.add_argument("--detector", metavar="MODEL",
                        help="pose estimation: the registry detector that finds the persons (default: the pose "
                        "module's choice)")
    parser.add_argument("--detector-params", metavar="FILE",
                        help="pose estimation: load the detector's weights from a local .params file")
    parser.add_argument("--detector-file", metavar="FILE.onnx",
                        help="pose estimation with --runtime onnx: the detector's exported file (default: its "
                        "converted file in the cache)")
    parser.add_argument("--box", type=float, nargs=4, metavar=("X0", "Y0", "X1", "Y1"),
                        help="in pixels: tracking, the object's box in the video's first frame; pose, the "
                        "person's box (instead of a detector)")
    parser.add_argument("--runtime", choices=("mxnet", "onnx"), default="mxnet",
                        help="mxnet (default) runs the model in MXNet; onnx runs its exported graph in "
                        "onnxruntime without importing MXNet (every task: pip install onnxruntime Pillow, and decord "
                        "for videos); --json prints the same structure for both")
    parser.add_argument("--model-file", metavar="FILE.onnx",
                        help="with --runtime onnx: the file gluon_hub.export(MODEL, FILE, format=\"onnx\") wrote "
                        "(default: the model's converted file in the cache, from gluon-hub convert/import); "
                        "MODEL still names the preprocessing and the class names")
    return parser



def _class_names(value: str) -> list[str] | int:
    """``--classes``: comma-separated names, or a count for files trained without names."""
    if value.strip().isdigit():
        return int(value)
    names = [name.strip() for name in value.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"empty class name in {value!r}; give names as a,b,c")
    return names




def main(argv: Sequence[str] | None = None) -> int:
    """Run ``gluon-hub predict``; returns the exit code."""
    args = build_parser().parse_args(argv)
    if args.model_file and args.runtime != "onnx":
        raise ValueError("--model-file is the exported file that --runtime onnx runs; add --runtime onnx")
    import gluon_hub

    spec = gluon_hub.info(args.model)
    if spec.task not in _TASK_MODULES:
        raise ValueError(f"gluon-hub predict runs {', '.join(sorted(_TASK_MODULES))} models; "
                         f"{spec.qualified_name!r} is a model for {spec.task}")
    return importlib.import_module(f".{_TASK_MODULES[spec.task]}", __package__).run(args, spec)
