"""Detection datasets read tiny generated datasets in the real formats as GluonCV 0.10 does.

VOC XML in the devkit layout, COCO ``instances_*.json``, ``.lst`` and RecordIO files are
written to ``tmp_path``; every item is compared with GluonCV's dataset classes on the same
files, and bad annotations must fail naming the file and the object.
"""

from __future__ import annotations

import json
import tarfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gluon_cv_core.datasets.archives import extracted_archive
from gluon_cv_core.datasets.coco import COCODetection, coco
from gluon_cv_core.datasets.packed import LstDetection, RecordFileDetection, parse_packed_label
from gluon_cv_core.datasets.specs import dataset_specs
from gluon_cv_core.datasets.voc import VOCDetection, voc
from gluon_cv_core.detection.classes import COCO_CLASSES, VOC_CLASSES
from gluon_hub.compat import mx

from gluoncv.data import (
    COCODetection as GluonCOCO,
    LstDetection as GluonLst,
    RecordFileDetection as GluonRecord,
    VOCDetection as GluonVOC,
)

WIDTH, HEIGHT = 60, 40


def _jpeg(path: Path, seed: int, size: tuple[int, int] = (WIDTH, HEIGHT)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = np.random.RandomState(seed).randint(0, 256, (size[1], size[0], 3)).astype(np.uint8)
    Image.fromarray(pixels).save(path, format="JPEG")


def _voc_xml(objects: list[tuple[str, tuple[int, int, int, int], int | str | None]], size=(WIDTH, HEIGHT)) -> str:
    parts = [f"<annotation><filename>x.jpg</filename><size><width>{size[0]}</width>"
             f"<height>{size[1]}</height><depth>3</depth></size>"]
    for name, (x1, y1, x2, y2), difficult in objects:
        flag = "" if difficult is None else f"<difficult>{difficult}</difficult>"
        parts.append(f"<object><name>{name}</name><pose>Left</pose>{flag}<bndbox><xmin>{x1}</xmin>"
                     f"<ymin>{y1}</ymin><xmax>{x2}</xmax><ymax>{y2}</ymax></bndbox></object>")
    return "".join(parts) + "</annotation>"


VOC_FIXTURE = {
    "VOC2007": {
        "000001": [("dog", (1, 1, 30, 20), 0), ("person", (10, 5, 60, 40), 1)],
        "000002": [("car", (5, 6, 25, 33), "?"), ("Cat ", (2, 2, 8, 9), 0)],  # unreadable flag; case, spaces
        "000003": [],  # an image without objects: kept, as GluonCV keeps it
    },
    "VOC2012": {"2012_000004": [("tvmonitor", (3, 4, 59, 39), 0)]},
}


def _write_voc(root: Path, fixture=VOC_FIXTURE) -> Path:
    for year, images in fixture.items():
        folder = root / "VOCdevkit" / year
        (folder / "ImageSets" / "Main").mkdir(parents=True, exist_ok=True)
        (folder / "Annotations").mkdir(exist_ok=True)
        for seed, (image_id, objects) in enumerate(images.items()):
            _jpeg(folder / "JPEGImages" / f"{image_id}.jpg", seed)
            (folder / "Annotations" / f"{image_id}.xml").write_text(_voc_xml(objects))
        (folder / "ImageSets" / "Main" / "trainval.txt").write_text("".join(f"{i}\n" for i in images))
    return root


def test_voc_equals_gluoncv(tmp_path) -> None:
    root = _write_voc(tmp_path)
    splits = ((2007, "trainval"), (2012, "trainval"))
    ours, reference = VOCDetection(root, splits), GluonVOC(str(root / "VOCdevkit"), splits)
    assert len(ours) == len(reference) == 4 and ours.classes == tuple(reference.classes) == VOC_CLASSES
    for index in range(len(ours)):
        (image, label), (ref_image, ref_label) = ours[index], reference[index]
        np.testing.assert_array_equal(image.asnumpy(), ref_image.asnumpy())
        assert label.shape[1] == 6 and label.dtype == np.float64
        np.testing.assert_array_equal(label, np.asarray(ref_label, float).reshape(-1, 6))
    # 1-based devkit corners become 0-based; the difficult flag is kept
    np.testing.assert_array_equal(ours[0][1], [[0, 0, 29, 19, 11, 0], [9, 4, 59, 39, 14, 1]])
    assert ours[2][1].shape == (0, 6)


def test_voc_without_difficult_flags_reads_them_as_zero(tmp_path) -> None:
    # (GluonCV fails on such files with an AttributeError)
    root = _write_voc(tmp_path, {"VOC2007": {"000001": [("bus", (2, 3, 10, 12), None)]}})
    np.testing.assert_array_equal(VOCDetection(root, ((2007, "trainval"),))[0][1], [[1, 2, 9, 11, 5, 0]])


def test_voc_segments_and_transform(tmp_path) -> None:
    root = _write_voc(tmp_path)
    seen = []
    dataset = voc(root, "2007_trainval+2012_trainval",
                  transform=lambda img, lab: seen.append(lab.shape) or (img.shape, lab))
    assert len(dataset) == 4 and dataset[3][0] == (HEIGHT, WIDTH, 3) and seen == [(1, 6)]
    dataset[0][1][0, 0] = 99  # items are copies: the dataset's labels do not change
    assert dataset[0][1][0, 0] == 0
    lazy = VOCDetection(root, ((2007, "trainval"),), preload_label=False)
    np.testing.assert_array_equal(lazy[1][1], VOCDetection(root, ((2007, "trainval"),))[1][1])
    with pytest.raises(ValueError, match="unknown VOC segment '2012_test'"):
        voc(root, "2012_test")
    with pytest.raises(FileNotFoundError, match="no VOC2012 folder"):
        VOCDetection(tmp_path / "elsewhere", ((2012, "trainval"),))


@pytest.mark.parametrize("xml, message", [
    ("<annotation><size><width>60</width>", "malformed VOC annotation .*000001.xml"),
    (_voc_xml([("unicorn", (1, 1, 5, 5), 0)]), r"000001.xml, object 0: unknown class 'unicorn'"),
    (_voc_xml([("dog", (1, 1, 5, 5), 0), ("dog", (10, 10, 62, 20), 0)]),  # 61 would be the last pixel
     r"000001.xml, object 1: box \[10.0, 10.0, 62.0, 20.0\] \(1-based\) is empty or outside the 60x40 image"),
    (_voc_xml([("dog", (5, 1, 5, 9), 0)]), r"object 0: box .* is empty"),
    (_voc_xml([("dog", (1, 1, 5, 5), 0)]).replace("<xmax>5</xmax>", "<xmax>five</xmax>"),
     r"object 0: <bndbox/xmax> is 'five', not a number"),
    (_voc_xml([("dog", (1, 1, 5, 5), 0)]).replace("<width>60</width>", ""), "missing <size/width>"),
])
def test_voc_bad_annotations_name_the_file_and_object(tmp_path, xml, message) -> None:
    root = _write_voc(tmp_path, {"VOC2007": {"000001": []}})
    (root / "VOCdevkit" / "VOC2007" / "Annotations" / "000001.xml").write_text(xml)
    with pytest.raises(ValueError, match=message):
        VOCDetection(root, ((2007, "trainval"),))


def test_archives_are_extracted_once_and_redone_when_interrupted(tmp_path) -> None:
    source = _write_voc(tmp_path / "src")
    archive = tmp_path / "VOCtrainval.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(source / "VOCdevkit", arcname="VOCdevkit")
    target = tmp_path / "extracted"
    assert extracted_archive(archive, target) == target
    assert len(VOCDetection(target, ((2007, "trainval"), (2012, "trainval")))) == 4
    listing = target / "VOCdevkit" / "VOC2007" / "ImageSets" / "Main" / "trainval.txt"
    listing.write_text("000001\n")
    extracted_archive(archive, target)  # complete: not extracted again
    assert listing.read_text() == "000001\n"
    (target / f".{archive.name}.complete").unlink()  # as if interrupted
    extracted_archive(archive, target)
    assert len(listing.read_text().split()) == 3
    (tmp_path / "junk.bin").write_bytes(b"not an archive\n" * 64)
    with pytest.raises(ValueError, match="neither a tar nor a zip"):
        extracted_archive(tmp_path / "junk.bin", target)


def test_registered_archives_are_gluoncv_published_ones() -> None:
    specs = {spec.name: spec for spec in dataset_specs()}
    voc_files = {ref.urls[0].rsplit("/", 1)[-1]: ref.hash for ref in specs["voc"].files}
    assert voc_files == {
        "VOCtrainval_06-Nov-2007.tar": "sha1:34ed68851bce2a36e2a223fa52c661d592c66b3c",
        "VOCtest_06-Nov-2007.tar": "sha1:41a8d6e12baa5ab18ee7f8f8029b9e11805b4ef1",
        "VOCtrainval_11-May-2012.tar": "sha1:4e443f8a2eca6b1dac8a6c57641b67dd40621a49",
    }
    coco_files = [ref.urls[0].rsplit("/", 1)[-1] for ref in specs["coco"].files]
    assert coco_files == ["train2017.zip", "val2017.zip", "annotations_trainval2017.zip"]
    assert specs["coco"].files[2].hash == "sha1:8551ee4bb5860311e79dace7e79cb91e432e78b3"
    assert specs["voc"].task == specs["coco"].task == "object-detection"


# ---------------------------------------------------------------------------- COCO

# COCO's category ids skip numbers (1..90 for 80 classes): the contiguous mapping matters
COCO_IDS = [i for i in range(1, 91) if i not in (12, 26, 29, 30, 45, 66, 68, 69, 71, 83)]


def _write_coco(root: Path, split: str = "val2017", coco_url: bool = True) -> Path:
    images = []
    for k, (image_id, size) in enumerate([(42, (60, 40)), (7, (50, 30)), (100, (40, 60)), (3, (60, 40))]):
        name = f"{image_id:012d}.jpg"
        _jpeg(root / split / name, k, size)
        entry = {"id": image_id, "file_name": name, "width": size[0], "height": size[1]}
        if coco_url:
            entry["coco_url"] = f"http://images.cocodataset.org/{split}/{name}"
        images.append(entry)
    anns = [
        (42, 1, [1.5, 2.0, 20.0, 10.0], 200.0, 0),
        (42, 90, [30.0, 5.0, 40.0, 50.0], 1500.0, 0),  # runs past the 60x40 image: clipped
        (42, 18, [0.0, 0.0, 60.0, 40.0], 2400.0, 1),  # crowd
        (7, 3, [5.0, 5.0, 2.0, 2.0], 4.0, 0),  # small: dropped by min_object_area=5
        (7, 44, [10.0, 3.0, 12.0, 20.0], 240.0, 0),
        (7, 44, [10.0, 3.0, 0.5, 20.0], 0.0, 0),  # no area
        (100, 62, [3.0, 4.0, 20.0, 30.0], 600.0, 1),  # only a crowd box: empty without crowds
    ]
    annotations = [{"id": i + 1, "image_id": img, "category_id": cat, "bbox": box, "area": area, "iscrowd": crowd}
                   for i, (img, cat, box, area, crowd) in enumerate(anns)]
    categories = [{"id": cid, "name": name, "supercategory": "thing"} for cid, name in zip(COCO_IDS, COCO_CLASSES)]
    (root / "annotations").mkdir(parents=True, exist_ok=True)
    path = root / "annotations" / f"instances_{split}.json"
    path.write_text(json.dumps({"images": images, "annotations": annotations, "categories": categories}))
    return path


@pytest.mark.parametrize("kwargs", [{"use_crowd": False}, {"use_crowd": True, "min_object_area": 5},
                                    {"use_crowd": False, "skip_empty": False}])
def test_coco_equals_gluoncv(tmp_path, kwargs) -> None:
    _write_coco(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = COCODetection(tmp_path, "instances_val2017", **kwargs)
    reference = GluonCOCO(str(tmp_path), ("instances_val2017",), **kwargs)
    assert len(ours) == len(reference) and ours.json_id_to_contiguous == reference.json_id_to_contiguous
    assert ours.contiguous_id_to_json[79] == 90
    for index in range(len(ours)):
        (image, label), (ref_image, ref_label) = ours[index], reference[index]
        np.testing.assert_array_equal(image.asnumpy(), ref_image.asnumpy())
        np.testing.assert_array_equal(label, ref_label)
        assert label.dtype == np.float64 and label.shape[1] == 5
    skipped = [str(w.message) for w in caught if "without objects" in str(w.message)]
    if kwargs.get("skip_empty", True):  # image 3 has no objects, image 100 only a crowd box
        assert len(skipped) == 1 and f"skipped {1 if kwargs['use_crowd'] else 2} image(s)" in skipped[0]
    else:
        assert not skipped and len(ours) == 4 and (ours.labels[0] == -1).all()


def test_coco_conventions_by_hand(tmp_path) -> None:
    _write_coco(tmp_path, coco_url=False)  # image folder from the split name instead
    skipped = r"skipped 2 image\(s\) without objects \(000000000003.jpg, 000000000100.jpg\)"
    with pytest.warns(UserWarning, match=skipped):
        dataset = COCODetection(tmp_path)
    assert dataset.image_ids == [7, 42]
    by_id = dict(zip(dataset.image_ids, dataset.labels))
    # xywh -> inclusive corners, clipped to the image; ids mapped to 0..79 in category order
    np.testing.assert_array_equal(by_id[42], [[1.5, 2.0, 20.5, 11.0, 0], [30.0, 5.0, 59.0, 39.0, 79]])
    np.testing.assert_array_equal(by_id[7], [[5, 5, 6, 6, 2], [10, 3, 21, 22, 39]])
    assert dataset.coco.getImgIds() == [42, 7, 100, 3]
    with pytest.warns(UserWarning, match="skipped 2 image"):
        by_segment = coco(tmp_path, "val", min_object_area=5)
    assert by_segment.image_ids == [7, 42] and len(by_segment.labels[0]) == 1
    with pytest.raises(ValueError, match="segments 'train' and 'val', got 'test'"):
        coco(tmp_path, "test")


def test_coco_bad_input_names_the_problem(tmp_path) -> None:
    path = _write_coco(tmp_path)
    data = json.loads(path.read_text())
    data["annotations"][3]["category_id"] = 12
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="annotation 4 has unknown category 12"):
        COCODetection(tmp_path)
    path.write_text(json.dumps(data)[:-20])
    with pytest.raises(ValueError, match="malformed COCO annotation file .*instances_val2017.json"):
        COCODetection(tmp_path)
    _write_coco(tmp_path)
    (tmp_path / "val2017" / "000000000007.jpg").unlink()
    with pytest.raises(FileNotFoundError, match=r"000000000007.jpg of .* \(id 7\) does not exist"):
        COCODetection(tmp_path)
    _write_coco(tmp_path)
    with pytest.raises(ValueError, match="not the expected classes"):
        COCODetection(tmp_path, classes=VOC_CLASSES)
    with pytest.warns(UserWarning, match="skipped 2 image"):
        assert COCODetection(tmp_path, classes=None).classes == COCO_CLASSES


# ---------------------------------------------------------------------------- .lst / RecordIO

PACKED = [  # header_len 4: [4, label_width, image width, image height]; then class, corners (normalised), extra
    [4, 6, WIDTH, HEIGHT, 1, 0.1, 0.2, 0.5, 0.9, 0.0, 3, 0.4, 0.0, 1.0, 0.5, 1.0],
    [4, 6, WIDTH, HEIGHT, 0, 0.0, 0.0, 1.0, 1.0, 0.0],
]


def test_lst_and_recordio_equal_gluoncv(tmp_path) -> None:
    lines, records = [], mx.recordio.MXIndexedRecordIO(str(tmp_path / "data.idx"), str(tmp_path / "data.rec"), "w")
    for index, label in enumerate(PACKED):
        _jpeg(tmp_path / "images" / f"{index}.jpg", index)
        lines.append("\t".join([str(index), *(f"{v:.6f}" for v in label), f"images/{index}.jpg"]))
        payload = (tmp_path / "images" / f"{index}.jpg").read_bytes()
        header = mx.recordio.IRHeader(0, np.array(label, np.float32), index, 0)
        records.write_idx(index, mx.recordio.pack(header, payload))
    records.close()
    (tmp_path / "data.lst").write_text("\n".join(lines) + "\n")
    for normalized in (True, False):
        pairs = [(LstDetection(tmp_path / "data.lst", root=tmp_path, coord_normalized=normalized),
                  GluonLst(str(tmp_path / "data.lst"), root=str(tmp_path), coord_normalized=normalized)),
                 (RecordFileDetection(tmp_path / "data.rec", coord_normalized=normalized),
                  GluonRecord(str(tmp_path / "data.rec"), coord_normalized=normalized))]
        for ours, reference in pairs:
            assert len(ours) == len(reference) == 2
            for index in range(2):
                (image, label), (ref_image, ref_label) = ours[index], reference[index]
                np.testing.assert_array_equal(image.asnumpy(), ref_image.asnumpy())
                np.testing.assert_allclose(label, ref_label, rtol=0, atol=0)
    label = LstDetection(tmp_path / "data.lst", root=tmp_path)[0][1]
    np.testing.assert_allclose(label, [[6, 8, 30, 36, 1, 0], [24, 0, 60, 20, 3, 1]], atol=1e-9)


def test_packed_label_errors(tmp_path) -> None:
    with pytest.raises(ValueError, match="label_width 4 >= 5"):
        parse_packed_label([2, 4, 0, 0, 1, 1])
    with pytest.raises(ValueError, match="7 values after the 2-value header are not whole objects of 5"):
        parse_packed_label([2, 5, 0, 0, 0, 1, 1, 0, 0])
    (tmp_path / "bad.lst").write_text("0\t2\t5\t0\t0\t0\t1\t1\ta.jpg\n1\t2\t5\t0\t0\t0\tx\t1\ta.jpg\n")
    with pytest.raises(ValueError, match=r"bad.lst, line 2: label values .* are not all numbers"):
        LstDetection(tmp_path / "bad.lst")
    with pytest.raises(FileNotFoundError, match="needs .*missing.rec and .*missing.idx"):
        RecordFileDetection(tmp_path / "missing.rec")
