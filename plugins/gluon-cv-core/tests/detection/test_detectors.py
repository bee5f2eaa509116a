"""Every registered detector has GluonCV 0.10's parameters, loads its files and matches its outputs.

Parametrized from the registry, so a detector added to ``detection_zoo.json`` is tested
here with no new test. GluonCV (test-only reference) builds each model with
``pretrained_base=False``; structure is compared symbolically (no weights allocated), and
one model per backbone family runs forward on random weights that GluonCV saved and ours
loaded strictly.
"""

from __future__ import annotations

import numpy as np
import pytest
from cv_testlib.detection import (
    assert_same,
    build_ours,
    empty_mirror,
    exported_and_reloaded,
    flat,
    random_input,
    random_params_files,
    randomize,
    roialign_without_negative_batch_indices,
    running_stats,
    strictly_loaded,
    structure,
)
from cv_testlib.rcnn import TEST_PROPOSALS, shrink, shrunk_options

import gluon_hub
from gluon_hub.compat import mx

import gluoncv  # noqa: E402  (test-only reference; after the compat shim)

pytestmark = pytest.mark.parity

#: the float32 detectors (the int8 SSDs, quantized at load, have their own tests)
MODELS = [n for n in gluon_hub.list_models(plugin="cv", task="object-detection")
          if "int8" not in gluon_hub.info(n).tags]


#: the custom-model defaults of GluonCV's ``train_faster_rcnn.py``, with which it builds
#: ``custom_faster_rcnn_fpn`` (GluonCV 0.10 registers that name to a double-head copy whose
#: forward pass fails, so the reference is the Faster R-CNN its ``faster_rcnn`` module defines)
CUSTOM_FPN_SCRIPT_DEFAULTS = dict(
    short=800, max_size=1333, min_stage=2, max_stage=6, nms_thresh=0.5, nms_topk=-1, post_nms=-1,
    roi_mode="align", roi_size=(7, 7), strides=(4, 8, 16, 32, 64), clip=4.14, rpn_channel=256, base_size=16,
    ratios=(0.5, 1, 2), scales=(2, 4, 8, 16, 32), alloc_size=(384, 384), rpn_nms_thresh=0.7,
    rpn_train_pre_nms=12000, rpn_train_post_nms=2000, rpn_test_pre_nms=6000, rpn_test_post_nms=1000,
    rpn_min_size=1, num_sample=512, pos_iou_thresh=0.5, pos_ratio=0.25, max_num_gt=100)


def _reference(name: str):
    """GluonCV's model; ``*_custom`` constructors get the VOC classes our specs default to."""
    from gluon_cv_core.detection.classes import VOC_CLASSES

    if name == "custom_faster_rcnn_fpn":
        from gluoncv.model_zoo.rcnn.faster_rcnn.faster_rcnn import custom_faster_rcnn_fpn

        return custom_faster_rcnn_fpn(list(VOC_CLASSES), pretrained_base=False, **CUSTOM_FPN_SCRIPT_DEFAULTS)
    classes = {"classes": list(VOC_CLASSES)} if name.endswith("_custom") else {}
    return gluoncv.model_zoo.get_model(name, pretrained=False, pretrained_base=False, **classes)


def test_the_zoo_has_every_gluoncv_detector() -> None:
    # the *_int8 names are quantized float32 models, tested on their own
    # (Mask R-CNN's names are instance segmentation; every other GluonCV name is no detector)
    families = ("ssd_", "yolo3_", "faster_rcnn_", "center_net_", "custom_faster_rcnn_", "doublehead_rcnn_")
    reference = {n for n in gluoncv.model_zoo.get_model_list()
                 if n.startswith(families) and not n.endswith("_int8")}
    assert {"custom_faster_rcnn_fpn", "doublehead_rcnn_resnet50_v1b_voc"} <= reference
    assert set(MODELS) == reference


@pytest.mark.parametrize("name", MODELS)
def test_parameter_names_shapes_and_count_match_gluoncv(name: str) -> None:
    size = gluon_hub.info(name).input.shape[-1]
    ours = build_ours(name)
    reference = _reference(name)
    expected = structure(reference, size)
    actual = structure(ours, size)
    assert sorted(actual) == sorted(expected)
    assert actual == expected
    # the stored anchors (and VGG's input scale) are data in the published files: equal too
    constants = {}
    for net in (reference, ours):
        net.initialize()  # constants now; everything else waits for a forward pass
        constants[net] = {k: p.data().asnumpy() for k, p in net._collect_params_with_prefix().items()
                          if isinstance(p, mx.gluon.Constant)}
    assert constants[ours].keys() == constants[reference].keys()
    assert bool(constants[ours]) != name.startswith("center_net_")  # CenterNet has no anchors
    for key, value in constants[reference].items():
        np.testing.assert_allclose(constants[ours][key], value, rtol=1e-6, err_msg=key)
    learnable = sum(int(np.prod(actual[k])) for k, p in ours._collect_params_with_prefix().items()
                    if p.grad_req != "null")
    assert learnable == gluon_hub.info(name).num_params
    if hasattr(reference, "collect_train_params"):  # the R-CNNs train a subset, chosen by name
        assert _trained(ours) == _trained(reference)


def _trained(net) -> set[str]:
    """Structural names of the parameters ``collect_train_params`` selects (by their Gluon names)."""
    selected = set(net.collect_train_params().values())
    return {key for key, param in net._collect_params_with_prefix().items() if param in selected}


@pytest.mark.parametrize("name", [n for n in MODELS if gluon_hub.info(n).pretrained])
def test_weights_name_the_file_gluoncv_publishes(name: str) -> None:
    from gluoncv.model_zoo import model_store

    spec = gluon_hub.info(name)
    variant = spec.weight()
    sha1 = model_store._model_sha1[name]
    assert variant.file.hash == f"sha1:{sha1}"
    assert variant.file.filename == f"gluon/models/{name}-{sha1[:8]}.zip"
    assert variant.tag == name.rsplit("_", 1)[1]
    assert spec.input.num_classes == len(build_ours(name).classes)


#: one model per backbone family, with a small input and one that is not a multiple of
#: the stride (VGG and ResNet-34-v1b end in unpadded 3x3 layers, hence larger inputs)
FAMILIES = {
    "ssd_300_vgg16_atrous_voc": [(264, 264), (263, 281)],
    "ssd_512_resnet18_v1_voc": [(64, 64), (97, 131)],
    "ssd_512_resnet152_v2_voc": [(64, 64), (97, 131)],
    "ssd_512_mobilenet1.0_voc": [(64, 64), (97, 131)],
    "ssd_300_mobilenet1.0_lite_coco": [(64, 64), (97, 131)],
    "ssd_300_resnet34_v1b_coco": [(272, 272), (281, 289)],
    "yolo3_darknet53_voc": [(64, 64), (97, 131)],
    "yolo3_mobilenet1.0_coco": [(64, 64), (97, 131)],
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """``saved(name)``: a file of random parameters written by GluonCV's model, made once."""

    def warmed(name: str):
        reference = _reference(name)
        reference.initialize()
        reference(mx.nd.zeros((1, 3, *FAMILIES.get(name, [(64, 64)])[0])))
        return reference

    return random_params_files(tmp_path_factory, warmed)


def _pair(name: str, path: str):
    """GluonCV's model and ours, both loaded strictly from the same file."""
    return strictly_loaded(_reference(name), path), strictly_loaded(build_ours(name), path)


@pytest.mark.parametrize("name", FAMILIES)
def test_inference_matches_gluoncv_hybridized_and_not(name: str, saved) -> None:
    reference, ours = _pair(name, saved(name))
    for hybridize in (False, True):
        if hybridize:
            ours.hybridize()
        for size in FAMILIES[name]:
            x = random_input(1, size)
            expected = reference(x)
            assert (expected[0].asnumpy() >= 0).sum() > 10  # NMS kept real detections to compare
            actual = ours(x)
            np.testing.assert_array_equal(actual[0].asnumpy(), expected[0].asnumpy())
            assert_same(actual[1], expected[1])
            assert_same(actual[2], expected[2])


def _training_step(net, x):
    """Training-mode outputs; MXNet updates BatchNorm statistics in the backward pass."""
    with mx.autograd.record():
        outputs = net(x)
        loss = outputs[0].sum() + (outputs[1] ** 2).sum()
    loss.backward()
    return outputs


@pytest.mark.parametrize("name", [n for n in FAMILIES if n.startswith("yolo3")])
def test_yolo3_training_mode_outputs_match_gluoncv(name: str, saved) -> None:
    # GluonCV's YOLOv3 computes its loss when recording, which needs training targets;
    # its training-mode outputs without recording are the raw predictions compared here
    reference, ours = _pair(name, saved(name))
    x = random_input(2, FAMILIES[name][1])
    with mx.autograd.train_mode():
        expected, actual = flat(reference(x)), flat(ours(x))
    assert len(actual) == len(expected) == 14
    for a, e in zip(actual, expected):
        assert a.shape == e.shape
        assert_same(a, e)


@pytest.mark.parametrize("name", [n for n in FAMILIES if n.startswith("ssd")])
def test_training_forward_and_batchnorm_statistics_match_gluoncv(name: str, saved) -> None:
    reference, ours = _pair(name, saved(name))
    x = random_input(2, FAMILIES[name][0])  # a batch of two, so batch statistics are real
    before = running_stats(reference)
    expected = _training_step(reference, x)
    actual = _training_step(ours, x)
    for a, e in zip(actual, expected):  # class logits, box offsets, anchors
        assert_same(a, e)
    after, ours_after = running_stats(reference), running_stats(ours)
    assert ours_after.keys() == after.keys()
    assert bool(after) == (name != "ssd_300_vgg16_atrous_voc")  # VGG-16 has no BatchNorm
    for key in after:
        np.testing.assert_allclose(ours_after[key], after[key], rtol=1e-5, atol=1e-6)
    # the statistics moved, so the comparison above is about the update, not the file;
    # ResNet V2's first BatchNorm normalizes the input itself, and MXNet updates statistics
    # in the backward pass, which it skips where no gradient flows
    still = [k for k in after if np.allclose(before[k], after[k])]
    assert all(k.startswith("features.resnetv20_batchnorm0_") for k in still), still
    grads = {k: p.grad().asnumpy() for k, p in ours._collect_params_with_prefix().items()
             if p.grad_req != "null"}
    for key, param in reference._collect_params_with_prefix().items():
        if param.grad_req != "null":
            expected_grad = param.grad().asnumpy()
            scale = max(1e-3, float(np.abs(expected_grad).max()))
            np.testing.assert_allclose(grads[key], expected_grad, rtol=1e-4, atol=1e-4 * scale)


def test_reset_class_keeps_the_reused_predictors_as_gluoncv_does(saved) -> None:
    name = "ssd_300_mobilenet0.25_voc"
    reference, ours = _pair(name, saved(name))
    x = random_input(1, (64, 64))
    new = ["person", "dog", "unicorn"]
    reference.reset_class(new, reuse_weights={"person": "person", "dog": 11})
    ours.reset_class(new, reuse_weights={"person": "person", "dog": 11})
    n = len(new) + 1
    for ref_pred, our_pred in zip(reference.class_predictors, ours.class_predictors):
        for attr in ("weight", "bias"):
            expected = getattr(ref_pred.predictor, attr).data().asnumpy()
            actual = getattr(our_pred.predictor, attr).data().asnumpy()
            assert actual.shape == expected.shape
            for row in range(0, actual.shape[0], n):  # background, person, dog; not unicorn
                np.testing.assert_array_equal(actual[row:row + 3], expected[row:row + 3])
    ids = ours(x)[0].asnumpy()
    assert set(np.unique(ids)) <= {-1.0, 0.0, 1.0, 2.0}
    assert ours.classes == tuple(new)
    with pytest.raises(ValueError, match="'cat'"):
        ours.reset_class(["dog"], reuse_weights={"dog": "cat"})


def test_yolo3_reset_class_keeps_the_reused_predictions_as_gluoncv_does(saved) -> None:
    name = "yolo3_mobilenet1.0_coco"
    reference, ours = _pair(name, saved(name))
    new = ["dog", "unicorn", "person"]
    reference.reset_class(new, reuse_weights=["dog", "person"])
    ours.reset_class(new, reuse_weights=["dog", "person"])
    per_anchor = 5 + len(new)
    for ref_head, our_head in zip(reference.yolo_outputs, ours.yolo_outputs):
        for attr in ("weight", "bias"):
            expected = getattr(ref_head.prediction, attr).data().asnumpy()
            actual = getattr(our_head.prediction, attr).data().asnumpy()
            assert actual.shape == expected.shape == (3 * per_anchor, *expected.shape[1:])
            for anchor in range(3):  # box, objectness, dog; then person; unicorn is new
                start = anchor * per_anchor
                np.testing.assert_array_equal(actual[start:start + 6], expected[start:start + 6])
                np.testing.assert_array_equal(actual[start + 7], expected[start + 7])
    ids = ours(random_input(1, (64, 64)))[0].asnumpy()
    assert set(np.unique(ids)) <= {-1.0, 0.0, 1.0, 2.0} and ours.classes == tuple(new)


@pytest.mark.parametrize("name, kwargs, file", [
    ("ssd_300_mobilenet0.25_voc", {"pretrained_base": True}, "mobilenet0.25-"),
    ("ssd_300_vgg16_atrous_voc", {"pretrained_base": True}, "vgg16_atrous-4fa2e1ad.zip"),
    ("yolo3_darknet53_voc", {"pretrained_base": True}, "darknet53-"),
    ("ssd_512_mobilenet1.0_custom", {"transfer": "voc", "classes": ["dog"]}, "ssd_512_mobilenet1.0_voc-37c18076.zip"),
    ("yolo3_mobilenet1.0_custom", {"transfer": "coco", "classes": ["dog"]}, "yolo3_mobilenet1.0_coco-66dbbae6.zip"),
])
def test_backbone_and_transfer_weights_come_through_the_cache(name, kwargs, file, tmp_path,
                                                              monkeypatch) -> None:
    with empty_mirror(monkeypatch, tmp_path) as paths:
        with pytest.raises(Exception, match=file.split("-")[0]):  # the mirror has nothing
            build_ours(name, **kwargs)
    assert any(p.startswith("/gluon/models/" + file) for p in paths), paths


@pytest.mark.parametrize("name", ["ssd_300_mobilenet0.25_voc", "yolo3_mobilenet0.25_voc"])
def test_hybridized_detector_exports_and_reloads_as_a_symbol_file(name: str, saved, tmp_path) -> None:
    _, ours = _pair(name, saved(name))
    x = random_input(1, (97, 131))
    expected, actual = exported_and_reloaded(ours, x, tmp_path, name)
    np.testing.assert_array_equal(actual[0].asnumpy(), expected[0].asnumpy())
    assert_same(actual[1], expected[1])
    assert_same(actual[2], expected[2])


def test_a_weight_initializer_leaves_the_extra_layers_batchnorm_vectors_alone() -> None:
    # GluonCV's own SSD fails here: Xavier reaches the extras' BatchNorm gamma
    net = build_ours("ssd_512_mobilenet1.0_voc")
    net.initialize(mx.init.Xavier())
    net(mx.nd.zeros((1, 3, 128, 128)))
    params = net.collect_params()
    for name, value in (("expand_trans_bn0_gamma", 1.0), ("expand_bn3_moving_var", 1.0),
                        ("expand_trans_bn0_beta", 0.0), ("expand_bn3_moving_mean", 0.0)):
        np.testing.assert_array_equal(params[name].data().asnumpy(), value)
    assert float(params["expand_conv0_weight"].data().abs().mean().asscalar()) > 0


#: the Faster R-CNN variants whose names lack the ``faster_rcnn_`` prefix (the others are
#: compared in ``test_faster_rcnn.py``), a small input and one not a multiple of the stride
OTHER_RCNNS = {"custom_faster_rcnn_fpn": [(96, 128), (97, 131)],
               "doublehead_rcnn_resnet50_v1b_voc": [(96, 128), (97, 131)]}


def _strictly_copied(net, params: dict):
    """``net`` with every parameter set from ``params`` (structural name -> array), none
    missing, none extra: a strict load without the file (large heads write slowly to disk)."""
    own = net._collect_params_with_prefix()
    assert sorted(own) == sorted(params)
    for key, value in params.items():
        own[key]._load_init(value, mx.cpu())
    return net


@pytest.mark.parametrize("name", OTHER_RCNNS)
def test_other_rcnn_inference_matches_gluoncv_hybridized_and_not(name: str) -> None:
    reference = _reference(name)
    reference.initialize()
    shrink(reference, 1)
    with roialign_without_negative_batch_indices():
        reference(mx.nd.zeros((1, 3, *OTHER_RCNNS[name][0])))  # shapes known: randomize
    randomize(reference, seed=0)
    params = {k: p.data() for k, p in reference._collect_params_with_prefix().items()}
    ours = _strictly_copied(build_ours(name, **shrunk_options(1)), params)
    expected = {}
    with roialign_without_negative_batch_indices():
        for size in OTHER_RCNNS[name]:
            expected[size] = reference(random_input(1, size))
    for hybridize in (False, True):
        if hybridize:
            ours.hybridize()
        for size in OTHER_RCNNS[name]:
            ids, scores, boxes = expected[size]
            assert ids.shape[1] == ours.num_class * TEST_PROPOSALS
            assert (ids.asnumpy() >= 0).sum() > 10  # NMS kept real detections to compare
            actual = ours(random_input(1, size))
            np.testing.assert_array_equal(actual[0].asnumpy(), ids.asnumpy())
            assert_same(actual[1], scores)
            assert_same(actual[2], boxes)
