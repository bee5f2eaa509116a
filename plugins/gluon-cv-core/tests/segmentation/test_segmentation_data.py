"""Segmentation datasets and transforms read tiny generated datasets in the real formats as GluonCV 0.10.

VOC palette PNGs in the devkit layout, SBD ``.mat`` files, ADE20K and Cityscapes folders,
COCO ``instances_*.json`` with polygons and RLE are written to ``tmp_path``; items, the
validation resize and the seeded training augmentation are compared with GluonCV's dataset
classes on the same files, and bad labels must fail naming the dataset, item and file.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
import scipy.io
from PIL import Image
from pycocotools import mask as coco_mask

from gluon_cv_core.datasets.ade20k import ADE20KSegmentation
from gluon_cv_core.datasets.cityscapes import CitySegmentation
from gluon_cv_core.datasets.coco import COCOInstance, COCOSegmentation
from gluon_cv_core.datasets.specs import dataset_specs
from gluon_cv_core.datasets.voc import VOCAugSegmentation, VOCSegmentation
from gluon_cv_core.detection.classes import COCO_CLASSES
from gluon_cv_core.segmentation.transforms import (
    SegmentationTestTransform,
    SegmentationTrainTransform,
    SegmentationValTransform,
)
from gluon_hub import load_dataset
from gluon_hub.compat import mx

from gluoncv.data import (
    ADE20KSegmentation as GluonADE,
    CitySegmentation as GluonCity,
    COCOInstance as GluonCOCOInstance,
    COCOSegmentation as GluonCOCOSeg,
    VOCAugSegmentation as GluonVOCAug,
    VOCSegmentation as GluonVOC,
)

SIZES = [(37, 29), (24, 41), (30, 30)]  # (W, H): landscape, portrait, square


def _jpeg(path: Path, seed: int, size: tuple[int, int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = np.random.RandomState(seed).randint(0, 256, (size[1], size[0], 3)).astype(np.uint8)
    Image.fromarray(pixels).save(path, format="JPEG")


def _png(path: Path, values: np.ndarray, palette: bool = True) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.fromarray(values.astype(np.uint8))
    if palette:  # VOC's masks: palette PNGs whose pixel values are class indices
        image.putpalette(np.random.RandomState(0).randint(0, 256, 768).astype(np.uint8).tobytes())
    image.save(path)


def _labels(seed: int, size: tuple[int, int], values: list[int]) -> np.ndarray:
    """Blocky label maps (so nearest-neighbour resizing matters) drawn from ``values``."""
    rng = np.random.RandomState(seed)
    coarse = rng.choice(values, size=(size[1] // 4 + 1, size[0] // 4 + 1))
    return np.kron(coarse, np.ones((4, 4), int))[: size[1], : size[0]]


def _voc(root: Path) -> Path:
    folder = root / "VOC2012"
    names = [f"2007_00{i}" for i in range(len(SIZES))]
    for i, (name, size) in enumerate(zip(names, SIZES)):
        _jpeg(folder / "JPEGImages" / f"{name}.jpg", i, size)
        _png(folder / "SegmentationClass" / f"{name}.png", _labels(i, size, [0, 1, 7, 15, 20, 255]))
    sets = folder / "ImageSets" / "Segmentation"
    sets.mkdir(parents=True)
    (sets / "trainval.txt").write_text("\n".join(names) + "\n")
    (sets / "val.txt").write_text(names[1] + "\n")
    return root


def _sbd(root: Path, trainval: bool = True) -> Path:
    folder = root / "VOCaug" / "dataset"
    names = [f"2008_00{i}" for i in range(len(SIZES))]
    for i, (name, size) in enumerate(zip(names, SIZES)):
        _jpeg(folder / "img" / f"{name}.jpg", 10 + i, size)
        (folder / "cls").mkdir(parents=True, exist_ok=True)
        segmentation = _labels(10 + i, size, [0, 3, 9, 20]).astype(np.uint8)
        scipy.io.savemat(folder / "cls" / f"{name}.mat", {"GTcls": {
            "Segmentation": segmentation, "Boundaries": np.zeros((20, 1), object),
            "CategoriesPresent": np.unique(segmentation)[1:].astype(np.uint8)}})
    (folder / "train.txt").write_text("\n".join(names[:2]) + "\n")
    (folder / "val.txt").write_text(names[2] + "\n")
    if trainval:  # what GluonCV's download script writes
        (folder / "trainval.txt").write_text("\n".join(names) + "\n")
    return root


def _ade(root: Path) -> Path:
    folder = root / "ADEChallengeData2016"
    for i, size in enumerate(SIZES):
        name = f"ADE_train_0000000{i}"
        _jpeg(folder / "images" / "training" / f"{name}.jpg", 20 + i, size)
        _png(folder / "annotations" / "training" / f"{name}.png", _labels(20 + i, size, [0, 1, 2, 75, 150]), False)
    return root


def _city(root: Path) -> Path:
    for i, size in enumerate(SIZES):
        city = ("aachen", "bochum")[i % 2]
        stem = f"{city}_00000{i}_000019"
        _jpeg(root / "leftImg8bit" / "train" / city / f"{stem}_leftImg8bit.png", 30 + i, size)
        _png(root / "gtFine" / "train" / city / f"{stem}_gtFine_labelIds.png",
             _labels(30 + i, size, [0, 4, 7, 8, 11, 24, 26, 29, 33]), False)
    return root


def _pairs(ours, theirs) -> list[tuple[int, int]]:
    """(our index, GluonCV's index) of the same file: GluonCV lists in file-system order."""
    where = {str(Path(p)): j for j, p in enumerate(theirs.images)}
    assert len(ours) == len(theirs)
    return [(i, where[str(p)]) for i, p in enumerate(ours.images)]


def _same_testval(ours, theirs) -> None:
    for i, j in _pairs(ours, theirs):
        image, label = ours[i]
        their_image, their_label = theirs[j]
        np.testing.assert_array_equal(image.asnumpy(), their_image.asnumpy())
        np.testing.assert_array_equal(label.asnumpy(), their_label.asnumpy())
        assert label.dtype == np.int32


def _same_val_and_train(ours, theirs, pad_label: int, base_size: int = 40, crop_size: int = 32) -> None:
    """GluonCV's ``val`` and seeded ``train`` modes against our transforms on every item."""
    theirs.crop_size, theirs.base_size = crop_size, base_size
    val = SegmentationValTransform(crop_size)
    for i, j in _pairs(ours, theirs):
        theirs.mode = "val"
        their_image, their_label = theirs[j]
        image, label = val.resize(ours.read_image(i), ours.read_label(i))
        np.testing.assert_array_equal(np.asarray(image), their_image.asnumpy())
        np.testing.assert_array_equal(label, their_label.asnumpy())
        theirs.mode = "train"
        for seed in range(6):  # flips, padding (long side down to 20 < 32) and blur all occur
            random.seed(seed)
            their_image, their_label = theirs[j]
            train = SegmentationTrainTransform(base_size, crop_size, pad_label=pad_label, seed=seed)
            image, label = train.augment(ours.read_image(i), ours.read_label(i))
            np.testing.assert_array_equal(np.asarray(image), their_image.asnumpy())
            np.testing.assert_array_equal(label, their_label.asnumpy())


def test_voc_items_val_and_seeded_train_equal_gluoncv(tmp_path: Path) -> None:
    root = _voc(tmp_path)
    ours = VOCSegmentation(root, "trainval")  # GluonCV's split="train" reads trainval.txt
    theirs = GluonVOC(root=str(root), split="train", mode="testval")
    assert len(ours) == 3 and ours.classes == tuple(theirs.classes) and ours.num_class == 21
    _same_testval(ours, theirs)
    assert set(np.unique(ours[0][1].asnumpy())) <= {-1, 0, 1, 7, 15, 20} and (ours[0][1].asnumpy() == -1).any()
    # GluonCV pads VOC masks with 0 (background); pad_label=0 reproduces it
    _same_val_and_train(ours, theirs, pad_label=0)
    assert [p.name for p in VOCSegmentation(root, "val").images] == ["2007_001.jpg"]


def test_normalized_outputs_equal_gluoncv_input_transform(tmp_path: Path) -> None:
    root = _voc(tmp_path)
    transforms = mx.gluon.data.vision.transforms
    normalize = transforms.Compose([transforms.ToTensor(), transforms.Normalize([.485, .456, .406], [.229, .224, .225])])
    theirs = GluonVOC(root=str(root), split="train", mode="val", transform=normalize, crop_size=24)
    ours = VOCSegmentation(root, "trainval", transform=SegmentationValTransform(24))
    image, label = ours[1]
    their_image, their_label = theirs[1]
    assert image.shape == (3, 24, 24) and image.dtype == np.float32
    np.testing.assert_allclose(image.asnumpy(), their_image.asnumpy(), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(label.asnumpy(), their_label.asnumpy())
    theirs.mode = "testval"
    image, label = VOCSegmentation(root, "trainval", transform=SegmentationTestTransform())[0]
    np.testing.assert_allclose(image.asnumpy(), theirs[0][0].asnumpy(), rtol=0, atol=1e-6)
    # a seeded transform repeats itself; another seed crops elsewhere
    crops = [SegmentationTrainTransform(40, 32, seed=seed)(ours.read_image(0), ours.read_label(0))
             for seed in (3, 3, 4)]
    assert crops[0][0].shape == (3, 32, 32) and crops[0][1].dtype == np.int32
    np.testing.assert_array_equal(crops[0][0].asnumpy(), crops[1][0].asnumpy())
    np.testing.assert_array_equal(crops[0][1].asnumpy(), crops[1][1].asnumpy())
    assert not np.array_equal(crops[0][0].asnumpy(), crops[2][0].asnumpy())


def test_sbd_mat_masks_equal_gluoncv(tmp_path: Path) -> None:
    root = _sbd(tmp_path)
    ours = VOCAugSegmentation(root, "trainval")
    theirs = GluonVOCAug(root=str(root), split="train", mode="val")
    assert len(ours) == 3 and ours.read_label(0).dtype == np.int32
    _same_val_and_train(ours, theirs, pad_label=0)
    # without trainval.txt (benchmark.tgz as released), trainval is train then val
    (root / "VOCaug" / "dataset" / "trainval.txt").unlink()
    assert VOCAugSegmentation(root, "trainval").images == ours.images
    assert len(VOCAugSegmentation(root, "val")) == 1


def test_ade20k_equals_gluoncv_and_ignores_unlabelled(tmp_path: Path) -> None:
    root = _ade(tmp_path)
    ours = ADE20KSegmentation(root, "train")
    theirs = GluonADE(root=str(root), split="train", mode="testval")
    assert ours.pred_offset == theirs.pred_offset == 1 and len(ours.classes) == 150
    _same_testval(ours, theirs)
    assert set(np.unique(ours.read_label(0))) <= {-1, 0, 1, 74, 149}
    _same_val_and_train(ours, theirs, pad_label=-1)  # GluonCV's 0 padding is ADE20K's "unlabelled"


def test_cityscapes_train_ids_equal_gluoncv(tmp_path: Path) -> None:
    root = _city(tmp_path)
    ours = CitySegmentation(root, "train")
    theirs = GluonCity(root=str(root), split="train", mode="testval")
    assert [p.parent.name for p in ours.images] == ["aachen", "aachen", "bochum"]
    _same_testval(ours, theirs)
    labels = np.concatenate([ours.read_label(i).ravel() for i in range(len(ours))])
    assert set(np.unique(labels)) == {-1, 0, 1, 2, 11, 13, 18}  # labelIds 7, 8, 11, 24, 26, 33; others void
    _same_val_and_train(ours, theirs, pad_label=-1)


def test_cityscapes_missing_folder_says_where_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"cityscapes-dataset\.com.*gtFine_trainvaltest\.zip.*leftImg8bit/"):
        CitySegmentation(tmp_path / "citys", "val")
    with pytest.raises(FileNotFoundError, match="cityscapes-dataset.com"):
        load_dataset("cityscapes", segment="train")


COCO_IDS = [i for i in range(1, 91) if i not in (12, 26, 29, 30, 45, 66, 68, 69, 71, 83)]
W, H = 50, 40


def _square(x: float, y: float, side: float) -> list[float]:
    return [x, y, x + side, y, x + side, y + side, x, y + side]


def _coco(root: Path, extra: dict | None = None) -> Path:
    """Three images: person+dog overlapping (polygons), a crowd RLE car, a stop sign only; a 4th tiny."""
    crowd = np.zeros((H, W), np.uint8)
    crowd[5:30, 20:45] = 1
    counts = []  # uncompressed RLE, as COCO stores crowd masks
    flat, value, run = crowd.ravel(order="F"), 0, 0
    for pixel in flat:
        if pixel != value:
            counts.append(run)
            value, run = pixel, 0
        run += 1
    counts.append(run)
    assert coco_mask.decode(coco_mask.frPyObjects({"counts": counts, "size": [H, W]}, H, W)).sum() == crowd.sum()
    anns = [
        {"id": 1, "image_id": 1, "category_id": 1, "iscrowd": 0, "area": 900.0, "bbox": [2, 2, 30, 30],
         "segmentation": [_square(2, 2, 30)]},
        {"id": 2, "image_id": 1, "category_id": 18, "iscrowd": 0, "area": 800.0, "bbox": [15, 10, 30, 28],
         "segmentation": [_square(15, 10, 28), [0, 0, 1, 1]]},  # a degenerate 2-point polygon is dropped
        {"id": 3, "image_id": 2, "category_id": 3, "iscrowd": 1, "area": 625.0, "bbox": [20, 5, 25, 25],
         "segmentation": {"counts": counts, "size": [H, W]}},
        {"id": 4, "image_id": 2, "category_id": 3, "iscrowd": 0, "area": 1200.0, "bbox": [0, 0, 40, 38],
         "segmentation": [_square(0, 0, 38)]},
        {"id": 5, "image_id": 3, "category_id": 13, "iscrowd": 0, "area": 1500.0, "bbox": [0, 0, 45, 35],
         "segmentation": [_square(0, 0, 35)]},
        {"id": 6, "image_id": 4, "category_id": 1, "iscrowd": 0, "area": 30.0, "bbox": [1, 1, 6, 6],
         "segmentation": [_square(1, 1, 6)]},
    ]
    images = []
    for image_id in (1, 2, 3, 4):
        name = f"{image_id:012d}.jpg"
        _jpeg(root / "val2017" / name, 40 + image_id, (W, H))
        images.append({"id": image_id, "file_name": name, "width": W, "height": H,
                       "coco_url": f"http://images.cocodataset.org/val2017/{name}"})
    categories = [{"id": cid, "name": name, "supercategory": "thing"} for cid, name in zip(COCO_IDS, COCO_CLASSES)]
    data = {"images": images, "annotations": anns, "categories": categories, **(extra or {})}
    (root / "annotations").mkdir(parents=True, exist_ok=True)
    (root / "annotations" / "instances_val2017.json").write_text(json.dumps(data))
    return root


def test_coco_segmentation_equals_gluoncv(tmp_path: Path) -> None:
    root = _coco(tmp_path)
    theirs = GluonCOCOSeg(root=str(root), split="val", mode="testval")
    ours = COCOSegmentation(root, "val", min_pixels=1000)
    # image 3 has only a stop sign (not a VOC class) and image 4 only 36 pixels: both dropped
    assert ours.image_ids == list(theirs.ids) == [1, 2]
    for i in range(len(ours)):
        image, label = ours[i]
        their_image, their_label = theirs[i]
        np.testing.assert_array_equal(image.asnumpy(), their_image.asnumpy())
        np.testing.assert_array_equal(label.asnumpy(), their_label.asnumpy())
    label = ours.read_label(0)
    assert label[5, 5] == 15 and label[35, 40] == 12 and label[20, 20] == 15  # person painted first wins
    assert set(np.unique(ours.read_label(1))) == {0, 7}  # crowd RLE car and polygon car
    # the kept ids are cached beside the annotations and reused
    assert COCOSegmentation(root, "val", min_pixels=1000).image_ids == [1, 2]
    assert len(COCOSegmentation(root, "val", min_pixels=10)) == 3
    # a changed annotation file is not read through a stale cache: image 2's cars become stop signs
    path = root / "annotations" / "instances_val2017.json"
    data = json.loads(path.read_text())
    for ann in data["annotations"]:
        ann["category_id"] = 13 if ann["image_id"] == 2 else ann["category_id"]
    path.write_text(json.dumps(data, indent=1))
    assert COCOSegmentation(root, "val", min_pixels=1000).image_ids == [1]


def test_coco_instance_equals_gluoncv_and_decodes_masks(tmp_path: Path) -> None:
    root = _coco(tmp_path)
    theirs = GluonCOCOInstance(root=str(root), splits="instances_val2017")
    ours = COCOInstance(root, "instances_val2017")
    assert len(ours) == len(theirs) == 4  # crowd object skipped; image 2 keeps its polygon car
    for i in range(len(ours)):
        image, label, segm = ours[i]
        their_image, their_label, their_segm = theirs[i]
        np.testing.assert_array_equal(image.asnumpy(), their_image.asnumpy())
        np.testing.assert_array_equal(label, their_label)
        assert label.dtype == np.float32
        assert len(segm) == len(their_segm)
        for polygons, their_polygons in zip(segm, their_segm):
            assert len(polygons) == len(their_polygons)
            for polygon, their_polygon in zip(polygons, their_polygons):
                np.testing.assert_array_equal(polygon, their_polygon)
    masked = COCOInstance(root, "instances_val2017", segm_format="mask")
    image, label, masks = masked[0]
    assert masks.shape == (2, H, W) and masks.dtype == np.uint8
    coco = masked.coco
    for k, ann_id in enumerate((1, 2)):
        np.testing.assert_array_equal(masks[k], coco.annToMask(coco.loadAnns(ann_id)[0]))


def test_coco_instance_rle_object_decodes_in_mask_format_only(tmp_path: Path) -> None:
    root = _coco(tmp_path)
    data = json.loads((root / "annotations" / "instances_val2017.json").read_text())
    person = np.zeros((H, W), np.uint8)
    person[10:20, 10:30] = 1
    compressed = coco_mask.encode(np.asfortranarray(person))
    data["annotations"][0]["segmentation"] = {"counts": compressed["counts"].decode(), "size": [H, W]}
    (root / "annotations" / "instances_val2017.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"instances_val2017\.json, image 1, annotation 1: .*RLE.*segm_format='mask'"):
        COCOInstance(root, "instances_val2017")
    masks = COCOInstance(root, "instances_val2017", segm_format="mask")[0][2]
    np.testing.assert_array_equal(masks[0], person)


def test_empty_instance_annotation_names_the_sample(tmp_path: Path) -> None:
    root = _coco(tmp_path)
    data = json.loads((root / "annotations" / "instances_val2017.json").read_text())
    data["annotations"][4]["segmentation"] = []
    (root / "annotations" / "instances_val2017.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"instances_val2017\.json, image 3, annotation 5: empty segmentation"):
        COCOInstance(root, "instances_val2017")
    data["annotations"][4]["segmentation"] = [_square(0, 0, 35)]
    data["annotations"][0]["segmentation"] = [[1, 2, 3, 4]]  # a person with no usable polygon
    (root / "annotations" / "instances_val2017.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"image 1 .*000000000001\.jpg.*annotation 1: empty segmentation"):
        COCOSegmentation(root, "val", min_pixels=0)


@pytest.mark.parametrize("value", [21, 254])
def test_voc_label_outside_the_classes_names_the_sample(tmp_path: Path, value: int) -> None:
    root = _voc(tmp_path)
    mask = root / "VOC2012" / "SegmentationClass" / "2007_001.png"
    values = np.array(Image.open(mask))
    values[3, 3] = value
    _png(mask, values)
    dataset = VOCSegmentation(root, "trainval")
    dataset[0]  # the other items are fine
    with pytest.raises(ValueError, match=rf"VOC segmentation item 1 \(.*2007_001\.png\): label values \[{value}\]"):
        dataset[1]


def test_label_errors_name_the_sample(tmp_path: Path) -> None:
    root = _ade(_voc(tmp_path))
    labels = root / "VOC2012" / "SegmentationClass"
    _png(labels / "2007_002.png", np.zeros((12, 30)))  # image is 30x30
    with pytest.raises(ValueError, match=r"VOC segmentation item 2 .*2007_002\.jpg is 30x30 .*label map is 30x12"):
        VOCSegmentation(root, "trainval")[2]
    Image.new("RGB", (24, 41)).save(labels / "2007_001.png")  # a colour-coded mask instead of indices
    with pytest.raises(ValueError, match=r"item 1 \(.*2007_001\.png\): the label is a RGB image"):
        VOCSegmentation(root, "trainval")[1]
    annotations = root / "ADEChallengeData2016" / "annotations" / "training"
    _png(annotations / "ADE_train_00000001.png", np.full((41, 24), 151), False)
    with pytest.raises(ValueError, match=r"ADE20K item 1 \(.*ADE_train_00000001\.png\): label values \[151\]"):
        ADE20KSegmentation(root, "train")[1]
    (annotations / "ADE_train_00000002.png").unlink()
    with pytest.raises(FileNotFoundError, match=r"ADE20K item 2 \(.*ADE_train_00000002\.png\)"):
        ADE20KSegmentation(root, "train")
    city = _city(tmp_path / "citys")
    _png(city / "gtFine" / "train" / "bochum" / "bochum_000001_000019_gtFine_labelIds.png",
         np.full((41, 24), 34), False)
    with pytest.raises(ValueError, match=r"Cityscapes item 2 \(.*bochum_000001_000019_gtFine_labelIds\.png\): "
                                         r"label values \[34\]"):
        CitySegmentation(city, "train")[2]


def test_segmentation_datasets_are_registered_with_published_hashes() -> None:
    specs = {spec.name: spec for spec in dataset_specs()}
    assert specs["voc_aug"].files[0].hash == "sha1:7129e0a480c2d6afb02b517bb18ac54283bfaa35"
    assert specs["ade20k"].files[0].hash == "sha1:219e1696abb36c8ba3a3afe7fb2f4b4606a897c7"
    assert specs["voc_segmentation"].files[0].hash == specs["voc"].files[2].hash
    assert not specs["cityscapes"].files and "registration" in specs["cityscapes"].license
    for name in ("voc_segmentation", "voc_aug", "ade20k", "cityscapes", "coco_segmentation"):
        assert specs[name].task == "semantic-segmentation"
    assert specs["coco_instance"].task == "instance-segmentation"


def test_load_dataset_builds_each_from_a_root(tmp_path: Path) -> None:
    assert len(load_dataset("voc_segmentation", segment="val", root=str(_voc(tmp_path / "voc")))) == 1
    assert len(load_dataset("voc_aug", segment="train", root=str(_sbd(tmp_path / "sbd")))) == 2
    assert len(load_dataset("ade20k", segment="train", root=str(_ade(tmp_path / "ade")))) == 3
    assert len(load_dataset("cityscapes", segment="train", root=str(_city(tmp_path / "citys")))) == 3
    coco_root = str(_coco(tmp_path / "coco"))
    assert len(load_dataset("coco_segmentation", segment="val", root=coco_root)) == 2
    assert len(load_dataset("coco_instance", segment="val", root=coco_root)) == 4
