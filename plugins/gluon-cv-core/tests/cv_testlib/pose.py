"""Generated COCO person-keypoints files for the pose tests: annotation JSON plus JPEG images."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
from PIL import Image

SPLIT = "person_keypoints_val2017"


def person_keypoints(rng: np.random.RandomState, box: Sequence[float], unlabelled: Iterable[int] = (),
                     occluded: Iterable[int] = ()) -> list[float]:
    """51 keypoint numbers inside ``box`` (``x, y, w, h``): v=2, v=1 at ``occluded``, and
    ``0, 0, 0`` at ``unlabelled``."""
    x, y, w, h = box
    unlabelled, occluded = set(unlabelled), set(occluded)
    values: list[float] = []
    for joint in range(17):
        if joint in unlabelled:
            values += [0, 0, 0]
        else:
            values += [round(x + rng.uniform(0, w), 2), round(y + rng.uniform(0, h), 2), 1 if joint in occluded else 2]
    return values


def write_keypoints(root: Path, people: Sequence[tuple[int, int, list[float], list[float], int]],
                    images: Sequence[tuple[int, tuple[int, int]]] = ((1, (200, 160)), (2, (120, 100)), (3, (90, 60))),
                    info: bool = True, split: str = SPLIT) -> Path:
    """A COCO keypoints file ``root/annotations/<split>.json`` plus noise JPEGs of the given
    ``(id, (width, height))``; ``people`` rows are ``(id, image, bbox, keypoints, iscrowd)``.
    Without ``info`` the file is one pycocotools >= 2.0.9 cannot evaluate unaided."""
    folder = root / split.split("_", 1)[-1]
    entries = []
    for image_id, (width, height) in images:
        name = f"{image_id:012d}.jpg"
        folder.mkdir(parents=True, exist_ok=True)
        pixels = np.random.RandomState(image_id).randint(0, 256, (height, width, 3)).astype(np.uint8)
        Image.fromarray(pixels).save(folder / name, format="JPEG")
        entries.append({"id": image_id, "file_name": name, "width": width, "height": height,
                        "coco_url": f"http://images.cocodataset.org/{folder.name}/{name}"})
    annotations = [{"id": ann_id, "image_id": image_id, "category_id": 1, "bbox": box, "keypoints": kps,
                    "num_keypoints": int(sum(v > 0 for v in kps[2::3])), "iscrowd": crowd,
                    "area": float(box[2] * box[3])}
                   for ann_id, image_id, box, kps, crowd in people]
    categories = [{"id": 1, "name": "person", "supercategory": "person",
                   "keypoints": [f"joint{i}" for i in range(17)], "skeleton": []}]
    (root / "annotations").mkdir(parents=True, exist_ok=True)
    path = root / "annotations" / f"{split}.json"
    data = {"images": entries, "annotations": annotations, "categories": categories}
    if info:
        data["info"] = {"description": "generated"}
    path.write_text(json.dumps(data))
    return path


def write_people(root: Path, images: int = 3, per_image: int = 2, size: tuple[int, int] = (96, 80),
                 seed: int = 0, split: str = SPLIT) -> Path:
    """``images`` noise pictures of ``size`` (width, height), each with ``per_image`` people whose
    boxes and joints lie inside it; a few joints are unlabelled or occluded."""
    rng = np.random.RandomState(seed)
    width, height = size
    people = []
    for image in range(1, images + 1):
        for k in range(per_image):
            w, h = float(rng.randint(width // 4, width // 2)), float(rng.randint(height // 3, height - 10))
            box = [float(rng.randint(0, width - int(w))), float(rng.randint(0, height - int(h))), w, h]
            hidden = rng.choice(17, 2, replace=False)
            people.append((100 * image + k, image, box,
                           person_keypoints(rng, box, unlabelled=hidden[:1], occluded=hidden[1:]), 0))
    return write_keypoints(root, people, images=[(i, size) for i in range(1, images + 1)], split=split)
