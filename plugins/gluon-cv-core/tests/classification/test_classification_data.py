"""Vision data: presets from model specs, image folders, CIFAR archives, top-k, sharding."""

from __future__ import annotations

import io
import tarfile

import numpy as np
import pytest
from PIL import Image

import gluon_hub
from gluon_cv_core.classification.transforms import eval_transform, geometry, train_transform
from gluon_cv_core.common.images import read_image
from gluon_cv_core.common.metrics import TopKAccuracy, topk_correct
from gluon_cv_core.datasets.cifar import CIFAR10
from gluon_cv_core.datasets.folder import ImageFolderDataset
from gluon_hub import InputSpec
from gluon_hub.compat import mx

IMAGENET = InputSpec(shape=(3, 224, 224), layout="NCHW", resize=256, crop=224,
                     mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))


# -- presets --------------------------------------------------------------------------

def test_presets_follow_the_model_spec():
    big, small = geometry("resnet50_v1d"), geometry("cifar_resnet20_v1")
    assert (big.resize, big.crop, big.large) == (256, 224, True)
    assert (small.resize, small.crop, small.large) == (32, 32, False)
    assert big.mean == gluon_hub.info("resnet50_v1d").input.mean


def test_eval_preset_resizes_the_shorter_side_crops_the_centre_and_normalises():
    # A 300x600 image whose left and right quarters are white: after scaling the shorter
    # side to 256 (-> 256x512) and a 224 centre crop, only the grey middle remains.
    image = np.full((300, 600, 3), 100, np.uint8)
    image[:, :150] = image[:, 450:] = 255
    out = eval_transform(IMAGENET)(mx.nd.array(image, dtype=np.uint8)).asnumpy()
    assert out.shape == (3, 224, 224) and out.dtype == np.float32
    expected = (100 / 255 - np.array(IMAGENET.mean)) / np.array(IMAGENET.std)
    np.testing.assert_allclose(out.mean(axis=(1, 2)), expected, rtol=1e-5)
    np.testing.assert_allclose(out.std(axis=(1, 2)), 0, atol=1e-5)


def test_means_on_the_0_255_scale_are_recognised():
    spec = InputSpec(crop=8, mean=(123.0, 117.0, 104.0), std=(58.0, 57.0, 57.0))
    out = eval_transform(spec)(mx.nd.full((8, 8, 3), 123, dtype=np.uint8)).asnumpy()
    np.testing.assert_allclose(out[0], 0, atol=1e-5)
    np.testing.assert_allclose(out[1], (123 - 117) / 57, rtol=1e-5)


def test_train_presets_give_model_sized_random_crops():
    mx.random.seed(0)
    image = mx.nd.array(np.random.default_rng(0).integers(0, 256, (300, 400, 3)), dtype=np.uint8)
    big = train_transform(IMAGENET)
    a, b = big(image).asnumpy(), big(image).asnumpy()
    assert a.shape == b.shape == (3, 224, 224) and not np.allclose(a, b)
    small = train_transform("cifar_resnet20_v1")(mx.nd.array(np.full((32, 32, 3), 200), dtype=np.uint8))
    assert small.shape == (3, 32, 32)


@pytest.mark.parametrize(
    "spec, message",
    [
        (InputSpec(mean=(0.5,), std=(0.5,)), "neither crop nor"),
        (InputSpec(crop=8, mean=(0.5,)), "both mean and std"),
        (InputSpec(crop=224, resize=200), "smaller than crop"),
        (InputSpec(shape=(224, 224, 3), layout="HWC"), "CHW"),
    ],
)
def test_bad_input_specs_are_refused(spec, message):
    with pytest.raises(ValueError, match=message):
        eval_transform(spec)


# -- images and folders ---------------------------------------------------------------

def _save(path, color, size=(12, 10)):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path)


def test_image_folder_labels_by_sorted_class_folder(tmp_path):
    _save(tmp_path / "b_dog" / "1.png", (0, 0, 255))
    _save(tmp_path / "a_cat" / "2.png", (255, 0, 0))
    _save(tmp_path / "a_cat" / "sub" / "3.jpg", (0, 255, 0))
    (tmp_path / "a_cat" / "notes.txt").write_text("not an image")
    (tmp_path / "empty_class").mkdir()
    data = ImageFolderDataset(tmp_path)
    assert data.classes == ["a_cat", "b_dog", "empty_class"]
    assert [label for _, label in data.items] == [0, 0, 1]
    image, label = data[2]
    assert label == 1 and image.shape == (10, 12, 3) and image.dtype == np.uint8
    assert image.asnumpy()[0, 0].tolist() == [0, 0, 255]  # decoded as RGB, not BGR


def test_image_folder_errors_name_the_problem(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        ImageFolderDataset(tmp_path / "missing")
    with pytest.raises(ValueError, match="no class folders"):
        ImageFolderDataset(tmp_path)
    (tmp_path / "cls").mkdir()
    with pytest.raises(ValueError, match="no images"):
        ImageFolderDataset(tmp_path)
    (tmp_path / "broken.jpg").write_bytes(b"not a jpeg")
    with pytest.raises(ValueError, match="cannot decode image .*broken.jpg"):
        read_image(tmp_path / "broken.jpg")
    with pytest.raises(FileNotFoundError):
        read_image(tmp_path / "nope.jpg")


def test_imagenet_needs_a_prepared_folder(tmp_path):
    with pytest.raises(ValueError, match="image-net.org"):
        gluon_hub.load_dataset("imagenet", segment="val")
    _save(tmp_path / "val" / "n01440764" / "x.JPEG", (1, 2, 3))
    data = gluon_hub.load_dataset("imagenet", segment="val", root=str(tmp_path))
    assert len(data) == 1 and data.classes == ["n01440764"]


# -- CIFAR ----------------------------------------------------------------------------

def _records(images, labels):
    """Records in the published layout, written plane by plane independently of the parser."""
    out = bytearray()
    for image, label in zip(images, labels):
        out += bytes(label)
        for channel in range(3):
            out += image[:, :, channel].tobytes()
    return bytes(out)


def _add(tar, name, payload):
    info = tarfile.TarInfo(name)
    info.size = len(payload)
    tar.addfile(info, io.BytesIO(payload))


def _cifar10_archive(path, per_batch=3):
    rng = np.random.default_rng(1)
    batches = {}
    for name in [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]:
        images = rng.integers(0, 256, (per_batch, 32, 32, 3), dtype=np.uint8)
        labels = [[int(v)] for v in rng.integers(0, 10, per_batch)]
        batches[name] = (images, labels)
    with tarfile.open(path, "w:gz") as tar:
        for name, (images, labels) in batches.items():
            _add(tar, f"cifar-10-batches-bin/{name}", _records(images, labels))
        _add(tar, "cifar-10-batches-bin/batches.meta.txt", b"airplane\nautomobile\nbird\n\n")
    return batches


def test_cifar10_reads_the_binary_archive(tmp_path):
    archive = tmp_path / "cifar-10-binary.tar.gz"
    batches = _cifar10_archive(archive)
    train = gluon_hub.load_dataset("cifar10", segment="train", source=str(archive))
    assert len(train) == 15 and train.classes == ["airplane", "automobile", "bird"]
    expected = np.concatenate([batches[f"data_batch_{i}.bin"][0] for i in range(1, 6)])
    np.testing.assert_array_equal(train.data, expected)
    image, label = train[7]
    assert image.shape == (32, 32, 3) and image.dtype == np.uint8
    np.testing.assert_array_equal(image.asnumpy(), expected[7])
    assert label == batches["data_batch_3.bin"][1][1][0]
    test = CIFAR10("test", source=archive)
    assert [int(v) for v in test.labels] == [v[0] for v in batches["test_batch.bin"][1]]


def test_cifar10_reads_an_extracted_folder(tmp_path):
    archive = tmp_path / "cifar-10-binary.tar.gz"
    batches = _cifar10_archive(archive)
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            target = tmp_path / "extracted" / member.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tar.extractfile(member).read())
    test = gluon_hub.load_dataset("cifar10", segment="test", root=str(tmp_path / "extracted"))
    np.testing.assert_array_equal(test.data, batches["test_batch.bin"][0])


def test_cifar_archives_in_root_must_be_the_published_ones(tmp_path):
    _cifar10_archive(tmp_path / "cifar-10-binary.tar.gz")
    with pytest.raises(FileNotFoundError, match="expected sha1:fab780a1e191a7eda0f345501ccd62d20f7ed891"):
        gluon_hub.load_dataset("cifar10", segment="train", root=str(tmp_path))
    with pytest.raises(ValueError, match="not both"):
        CIFAR10("train", root=str(tmp_path), source=str(tmp_path))


def test_cifar100_has_fine_and_coarse_labels(tmp_path):
    rng = np.random.default_rng(2)
    images = rng.integers(0, 256, (4, 32, 32, 3), dtype=np.uint8)
    labels = [[3, 71], [19, 0], [0, 99], [7, 7]]  # (coarse, fine)
    with tarfile.open(tmp_path / "cifar-100-binary.tar.gz", "w:gz") as tar:
        for segment in ("train", "test"):
            _add(tar, f"cifar-100-binary/{segment}.bin", _records(images, labels))
        _add(tar, "cifar-100-binary/fine_label_names.txt", b"apple\naquarium_fish\n")
        _add(tar, "cifar-100-binary/coarse_label_names.txt", b"aquatic_mammals\n")
    archive = str(tmp_path / "cifar-100-binary.tar.gz")
    fine = gluon_hub.load_dataset("cifar100", segment="train", source=archive)
    coarse = gluon_hub.load_dataset("cifar100", segment="test", source=archive, fine_label=False)
    assert fine.labels.tolist() == [71, 0, 99, 7] and coarse.labels.tolist() == [3, 19, 0, 7]
    assert fine.classes == ["apple", "aquarium_fish"] and coarse.classes == ["aquatic_mammals"]
    np.testing.assert_array_equal(fine[2][0].asnumpy(), images[2])


def test_cifar_refuses_truncated_or_foreign_archives(tmp_path):
    with tarfile.open(tmp_path / "cifar-10-binary.tar.gz", "w:gz") as tar:
        for i in range(1, 6):
            _add(tar, f"cifar-10-batches-bin/data_batch_{i}.bin", b"\x00" * 3000)
        _add(tar, "cifar-10-batches-bin/batches.meta.txt", b"a\n")
    archive = tmp_path / "cifar-10-binary.tar.gz"
    with pytest.raises(ValueError, match="not a whole number of 3073-byte records"):
        CIFAR10("train", source=archive)
    with pytest.raises(ValueError, match="lacks test_batch.bin"):
        CIFAR10("test", source=archive)
    with pytest.raises(ValueError, match="has no segment 'validation'"):
        gluon_hub.load_dataset("cifar10", segment="validation", source=str(archive))


def test_cifar_without_local_files_goes_through_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GLUON_HUB_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("GLUON_HUB_CONFIG", str(tmp_path / "no-config.json"))
    monkeypatch.setenv("GLUON_HUB_OFFLINE", "1")
    with pytest.raises(FileNotFoundError, match="cifar-10-binary.tar.gz"):
        gluon_hub.load_dataset("cifar10", segment="test")


# -- metrics ---------------------------------------------------------------

def test_topk_matches_mxnet_metric_on_random_scores():
    rng = np.random.default_rng(3)
    scores, labels = rng.normal(size=(200, 17)), rng.integers(0, 17, 200)
    ours = TopKAccuracy((1, 5))
    for start in range(0, 200, 64):  # several batches accumulate
        ours.update(mx.nd.array(labels[start:start + 64]), mx.nd.array(scores[start:start + 64]))
    for k in (1, 5):
        reference = mx.metric.TopKAccuracy(top_k=k) if k > 1 else mx.metric.Accuracy()
        reference.update([mx.nd.array(labels)], [mx.nd.array(scores)])
        assert ours.get()[f"top{k}"] == pytest.approx(reference.get()[1])
    assert ours.count == 200


def _reference_topk(scores, labels, k):
    """Sort each row, with the label after every class tied with it; rows with NaN are wrong."""
    correct = 0
    for row, label in zip(scores, labels):
        if np.isnan(row).any():
            continue
        is_label = np.arange(row.size) == label
        order = np.lexsort((is_label, -row))  # by score descending, the label last among ties
        correct += int(label in order[:k])
    return correct


@pytest.mark.parametrize("k", [1, 3, 5])
def test_topk_matches_an_argsort_reference(k):
    rng = np.random.default_rng(4)
    scores, labels = rng.normal(size=(300, 12)), rng.integers(0, 12, 300)
    top = np.argsort(-scores, axis=1)[:, :k]  # no ties in continuous scores
    assert topk_correct(scores, labels, k) == int((top == labels[:, None]).any(axis=1).sum())
    ties = rng.integers(0, 4, size=(300, 12)).astype(np.float32)  # many ties
    assert topk_correct(ties, labels, k) == _reference_topk(ties, labels, k)


def test_topk_ties_do_not_favour_the_label():
    scores = [[1.0, 2.0, 2.0, 0.0]] * 2
    assert topk_correct(scores, [1, 2], k=1) == 0
    assert topk_correct(scores, [1, 2], k=2) == 2
    assert topk_correct([[3.0, 3.0, 3.0]], [0], k=2) == 0


def test_constant_outputs_score_zero():
    scores, labels = np.zeros((8, 10), np.float32), np.arange(8)
    metric = TopKAccuracy((1, 5))
    metric.update(mx.nd.array(labels), mx.nd.array(scores))
    assert metric.get() == {"top1": 0.0, "top5": 0.0}
    assert topk_correct(scores, labels, k=10) == 8  # all classes: every label is in


def test_nan_outputs_score_zero():
    labels = np.arange(4)
    assert topk_correct(np.full((4, 6), np.nan), labels, k=5) == 0
    scores = np.eye(4, 6) * 5.0  # the label is the top class in every row ...
    assert topk_correct(scores, labels, k=1) == 4
    scores[:, 5] = [np.nan, 0.0, np.nan, 0.0]  # ... but a NaN makes its row wrong
    assert topk_correct(scores, labels, k=1) == 2
    assert topk_correct(scores, labels, k=6) == 2


def test_topk_checks_its_inputs():
    assert topk_correct([[0.1, 0.9]], [1], k=5) == 1  # k above the class count is all classes
    with pytest.raises(ValueError, match="batch, classes"):
        topk_correct([0.1, 0.9], [1], k=1)
    with pytest.raises(ValueError, match="class indices"):
        topk_correct([[0.1, 0.9]], [2], k=1)
    with pytest.raises(ValueError, match="class indices"):
        topk_correct([[0.1, 0.9]], [-1], k=1)
    with pytest.raises(ValueError, match="positive"):
        TopKAccuracy((0,))
    assert np.isnan(TopKAccuracy().get()["top1"])
