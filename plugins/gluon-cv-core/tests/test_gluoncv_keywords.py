"""GluonCV's call patterns keep working: every keyword a GluonCV 0.10 model function takes is
accepted by ``gluon_hub.load`` for the model of the same name.

GluonCV's functions mostly take ``**kwargs`` and hand them on (``resnet50_v1(**kwargs)`` to
``get_resnet`` to ``ResNetV1``), so their keywords are followed through the source: every call
that forwards the ``**kwargs`` adds the callee's keywords, less those the call binds itself. A
class adds its ``__init__``'s keywords and, through ``super().__init__(**kwargs)``, its bases';
keywords a class hands to the sub-blocks it builds, and MXNet's own ``Block`` arguments
(``prefix``, ``params``), are not GluonCV's interface and are not followed. The hub's factory is
read the same way where it takes ``**kwargs``, so a keyword that would only reach a Block's
``__init__`` and fail there is not counted as accepted.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any, Callable

import pytest

import gluon_hub
from gluon_hub._factory import check_kwargs, import_object
from gluon_hub.compat import mx
from gluon_hub.errors import ModelBuildError

from gluoncv.model_zoo import model_zoo  # noqa: E402  (test-only reference; after the compat shim)

#: keywords ``gluon_hub.load`` takes itself: ``pretrained`` (True, False or a weight tag, as
#: GluonCV's), ``ctx`` and ``root`` (the cache directory instead of GluonCV's ``~/.mxnet/models``)
HANDLED_BY_LOAD = {"pretrained", "ctx", "root"}


def _resolve(node: ast.expr, namespace: dict[str, Any]) -> Any:
    """The object a call's ``func`` expression names in ``namespace``, or None."""
    if isinstance(node, ast.Name):
        return namespace.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, namespace)
        return getattr(base, node.attr, None) if base is not None else None
    return None


def _forwards(call: ast.Call, var: str) -> bool:
    """Whether ``call`` passes ``**var`` on, alone or inside a ``**{...}`` literal."""
    for keyword in call.keywords:
        if keyword.arg is None and any(isinstance(n, ast.Name) and n.id == var for n in ast.walk(keyword.value)):
            return True
    return False


def keywords(func: Callable[..., Any], bound: int = 0, given: frozenset[str] = frozenset(), depth: int = 0) -> set[str]:
    """Every keyword ``func`` accepts, following where its ``**kwargs`` go (see the module docstring)."""
    owner = None
    if inspect.isclass(func):
        if func.__module__.startswith("mxnet"):
            return set()
        owner = next(c for c in func.__mro__ if "__init__" in vars(c))
        target, bound = vars(owner)["__init__"], bound + 1
    else:
        target = func
    params = list(inspect.signature(target).parameters.values())
    named = [p for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    found = {p.name for p in named[bound:]} - given
    var = next((p.name for p in params if p.kind is p.VAR_KEYWORD), None)
    if var is None or depth > 8 or owner is not None and owner.__module__.startswith("mxnet"):
        return found
    namespace = {**vars(inspect.getmodule(target)), **getattr(target, "__globals__", {})}
    for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(target)))):
        if not isinstance(node, ast.Call) or not _forwards(node, var):
            continue
        explicit = frozenset(k.arg for k in node.keywords if k.arg)
        func_node = node.func
        if isinstance(func_node, ast.Attribute) and isinstance(func_node.value, ast.Call) \
                and getattr(func_node.value.func, "id", "") == "super":
            base = next((c for c in owner.__mro__[1:] if "__init__" in vars(c)), None) if owner else None
            if base is not None and not base.__module__.startswith("mxnet"):
                found |= keywords(base, len(node.args), explicit, depth + 1)
            continue
        if owner is not None:  # a class handing keywords to the sub-blocks it builds
            continue
        callee = _resolve(func_node, namespace)
        if callable(callee) and not getattr(callee, "__module__", "").startswith("mxnet"):
            found |= keywords(callee, len(node.args), explicit, depth + 1)
    return found


def _accepts(factory: Callable[..., Any], owner: str, keyword: str, resolved: set[str]) -> bool:
    try:
        check_kwargs(factory, owner, {keyword: None})
    except TypeError:
        return False
    takes_any = any(p.kind is p.VAR_KEYWORD for p in inspect.signature(factory).parameters.values())
    return not takes_any or keyword in resolved


def _pairs() -> list[tuple[str, str]]:
    """(hub name, factory) of every registered vision model GluonCV 0.10 also has."""
    return [(name, gluon_hub.info(name).factory)
            for name in gluon_hub.list_models(plugin="cv") if name in model_zoo._models]


def missing_keywords() -> dict[str, set[str]]:
    """GluonCV keywords the hub does not accept, by hub factory."""
    missing: dict[str, set[str]] = {}
    resolved: dict[str, set[str]] = {}
    for name, path in _pairs():
        factory = import_object(path, name)
        if path not in resolved:
            resolved[path] = keywords(factory)
        for keyword in sorted(keywords(model_zoo._models[name]) - HANDLED_BY_LOAD):
            if not _accepts(factory, name, keyword, resolved[path]):
                missing.setdefault(path, set()).add(keyword)
    return missing


def test_the_comparison_covers_the_zoo_and_sees_forwarded_keywords() -> None:
    """The resolver itself: GluonCV's forwarded keywords are found, and a hub factory's ``**kwargs``
    counts only for keywords it really passes somewhere."""
    assert len(_pairs()) > 300
    resnet = keywords(model_zoo._models["resnet50_v1b"])  # resnet50_v1b(..., **kw) -> ResNetV1b(...)
    assert {"pretrained", "ctx", "root", "classes", "dilated", "norm_layer", "stem_width"} <= resnet
    assert "prefix" not in resnet and "layers" not in resnet  # Block's own; bound by the call
    assert {"bz", "is_train", "pretrained", "root"} <= keywords(model_zoo._models["siamrpn_alexnet_v2_otb15"])
    faster = import_object(gluon_hub.info("faster_rcnn_resnet50_v1b_voc").factory, "faster")
    assert _accepts(faster, "faster", "rpn_test_post_nms", keywords(faster))  # through **options
    siamrpn = import_object(gluon_hub.info("siamrpn_alexnet_v2_otb15").factory, "siamrpn")
    assert not _accepts(siamrpn, "siamrpn", "no_such_keyword", keywords(siamrpn))


def test_every_gluoncv_keyword_is_accepted() -> None:
    missing = missing_keywords()
    report = "\n".join(f"{path}: {', '.join(sorted(words))}" for path, words in sorted(missing.items()))
    assert not missing, f"GluonCV keywords the hub's factories do not accept:\n{report}"


@pytest.mark.parametrize("name, keywords_", [
    ("siamrpn_alexnet_v2_otb15", {"bz": 1, "is_train": False}),
    ("p3d_resnet50_kinetics400", {"pretrained_base": True, "partial_bn": True}),
    ("r2plus1d_resnet18_kinetics400", {"pretrained_base": True, "partial_bn": True}),
    ("slowfast_4x16_resnet50_kinetics400", {"pretrained_base": True, "use_tsn": False, "partial_bn": False}),
    ("i3d_resnet50_v1_kinetics400", {"use_tsn": False}),
    ("inceptionv1_ucf101", {"use_tsn": False}),
])
def test_gluoncv_keywords_build_through_load(name: str, keywords_: dict[str, Any]) -> None:
    """The keywords that are accepted and ignored really are: the model builds, and its
    parameters are those of the model built without them."""
    net = gluon_hub.load(name, **keywords_)
    plain = gluon_hub.load(name)
    shapes = {k: p.shape for k, p in net._collect_params_with_prefix().items()}
    assert shapes == {k: p.shape for k, p in plain._collect_params_with_prefix().items()}


@pytest.mark.parametrize("name", ["p3d_resnet50_kinetics400", "r2plus1d_resnet18_kinetics400"])
def test_partial_bn_freezes_every_norm_after_the_stem(name: str) -> None:
    """GluonCV's ``partial_bn``: the stem's norms keep learning statistics, the others do not."""
    net = gluon_hub.load(name, partial_bn=True)
    norms = [b for b in _blocks(net) if "BatchNorm" in type(b).__name__]
    stem = 2 if name.startswith("r2plus1d") else 1
    frozen = [bool(b._kwargs.get("use_global_stats")) for b in norms]
    assert frozen[:stem] == [False] * stem and all(frozen[stem:]), frozen
    assert not any(b._kwargs.get("use_global_stats") for b in _blocks(gluon_hub.load(name))
                   if "BatchNorm" in type(b).__name__)


def _blocks(block: Any) -> list[Any]:
    """Every block under ``block``, depth first in registration order."""
    out = []
    for child in block._children.values():
        out.append(child)
        out.extend(_blocks(child))
    return out


def test_siamrpn_stateful_template_then_track_equals_the_stateless_form() -> None:
    net = gluon_hub.load("siamrpn_alexnet_v2_otb15", bz=1, is_train=False)
    rng = mx.nd.random
    z, x, x2 = rng.uniform(0, 255, (1, 3, 127, 127)), rng.uniform(0, 255, (1, 3, 287, 287)), \
        rng.uniform(0, 255, (1, 3, 287, 287))
    with pytest.raises(RuntimeError, match=r"call net.template\(z\)"):
        net.track(x)
    for hybridized in (False, True):
        if hybridized:
            net.hybridize()
        features = net.template(z)  # GluonCV's stateful pair ...
        first, second = net.track(x), net.track(x2)
        stateless = net.track(x, features), net.track(x2, net.template(z))
        together = net(z, x)
        for got, want in ((first, stateless[0]), (second, stateless[1]), (first, together)):
            for a, b in zip(got, want):
                assert a.shape == b.shape and (a - b).abs().max().asscalar() == 0
        assert (first["cls"] - first.cls).abs().max().asscalar() == 0  # GluonCV's dict keys
        cls, loc = second
        assert cls.shape == (1, 10, 21, 21) and loc.shape == (1, 20, 21, 21)


def _shapes(net: Any) -> dict[str, tuple[int, ...]]:
    return {k: p.shape for k, p in net._collect_params_with_prefix().items()}


@pytest.mark.parametrize("name, keywords_, same_as", [
    ("resnet50_v1b", {"deep_stem": True, "avg_down": True}, "resnet50_v1d"),
    ("resnet50_v1c", {"stem_width": 64}, "resnet50_v1s"),
    ("resnet50_v1b_gn", {"deep_stem": True, "stem_width": 64, "avg_down": True}, None),
    ("resnest14", {"stem_width": 64, "radix": 1}, None),
    ("densenet121", {"bn_size": 2}, None),
    ("nasnet_4_1056", {"stem_filters": 32}, None),
])
def test_structural_keywords_build_what_they_say(name: str, keywords_: dict[str, Any], same_as: str | None) -> None:
    """Keywords the hub implements rebuild the network as GluonCV's do: the same shapes as the
    named model that has them built in, or other shapes than the plain model."""
    net = _shapes(gluon_hub.load(name, **keywords_))
    if same_as is not None:
        assert net == _shapes(gluon_hub.load(same_as))
    else:
        assert net != _shapes(gluon_hub.load(name))


@pytest.mark.parametrize("name, keyword, value", [
    ("resnet18_v1b_0.89", "dilated", True),
    ("resnet50_v1d_0.86", "deep_stem", False),
    ("shufflenet_v1", "groups", 8),
    ("dla34", "use_feature", True),
    ("dla34", "block", object),
    ("googlenet", "aux_logits", True),
    ("hrnet_w18_small_v1_c", "purpose", "seg"),
])
def test_structural_keywords_the_hub_cannot_build_are_refused(name: str, keyword: str, value: Any) -> None:
    """Never a silently different network: a value other than the model's own names the keyword."""
    with pytest.raises(ModelBuildError, match=rf"ValueError: .*{keyword}=.*Leave {keyword} out"):
        gluon_hub.load(name, **{keyword: value})


@pytest.mark.parametrize("name, keywords_", [
    ("resnet18_v1b_0.89", {"dilated": False, "deep_stem": False, "stem_width": 32, "last_gamma": True}),
    ("googlenet", {"pretrained_base": True, "aux_logits": False}),
    ("dla34", {"levels": [1, 1, 1, 2, 2, 1], "use_feature": False, "momentum": 0.1}),
    ("mobilenetv3_small", {"last_gamma": True, "use_global_stats": True, "name_prefix": "m_"}),
    ("hrnet_w18_small_v1_c", {"purpose": "cls", "stage_interp_type": "nearest"}),
])
def test_gluoncv_defaults_and_non_structural_keywords_build_the_same_shapes(name: str, keywords_: dict[str, Any]) -> None:
    assert _shapes(gluon_hub.load(name, **keywords_)) == _shapes(gluon_hub.load(name))


@pytest.mark.parametrize("name", ["googlenet", "inceptionv3"])
def test_partial_bn_on_the_2d_inception_networks(name: str) -> None:
    """GluonCV's ``partial_bn``: the first norm keeps learning statistics, every later one does not."""
    norms = [b for b in _blocks(gluon_hub.load(name, partial_bn=True)) if isinstance(b, mx.gluon.nn.BatchNorm)]
    frozen = [bool(b._kwargs.get("use_global_stats")) for b in norms]
    assert len(frozen) > 50 and frozen[0] is False and all(frozen[1:])


@pytest.mark.parametrize("name, keywords_", [
    ("alpha_pose_resnet101_v1b_coco", {"pretrained_base": True}),
    ("mobile_pose_mobilenet1.0", {"pretrained_ctx": mx.cpu(), "base_attrs": ("features",)}),
    ("simple_pose_resnet18_v1b", {"pretrained_ctx": mx.cpu(), "num_deconv_layers": 3, "final_conv_kernel": 1,
                                  "num_deconv_filters": (256, 256, 256), "num_deconv_kernels": (4, 4, 4)}),
    ("fcn_resnet50_voc", {"height": None, "width": None}),
    ("danet_resnet50_citys", {"aux": False, "dilated": True}),
])
def test_accepted_keywords_that_change_nothing_here(name: str, keywords_: dict[str, Any]) -> None:
    """GluonCV's defaults, and keywords without an effect here (each factory's docstring says why)."""
    assert _shapes(gluon_hub.load(name, **keywords_)) == _shapes(gluon_hub.load(name))


def test_simple_pose_takes_gluoncvs_deconvolution_keywords() -> None:
    net = gluon_hub.load("simple_pose_resnet18_v1b", num_deconv_filters=(64, 32), num_deconv_layers=2,
                         num_deconv_kernels=(3, 3), final_conv_kernel=3)
    net(mx.nd.zeros((1, 3, 64, 48)))  # shapes the deferred parameters
    kernels = [p.shape for k, p in net._collect_params_with_prefix().items() if k.endswith("weight")
               and len(p.shape) == 4][-3:]  # two deconvolutions, then the final convolution
    assert [k[2:] for k in kernels] == [(3, 3), (3, 3), (3, 3)] and kernels[-1][1] == 32
    with pytest.raises(ModelBuildError, match="one kernel"):
        gluon_hub.load("simple_pose_resnet18_v1b", num_deconv_kernels=(4, 3, 4))
    with pytest.raises(ModelBuildError, match="num_deconv_layers=2"):
        gluon_hub.load("simple_pose_resnet18_v1b", num_deconv_layers=2)


@pytest.mark.parametrize("name, keywords_, message", [
    ("fcn_resnet50_voc", {"height": 480, "width": 480}, "always have the input's size"),
    ("icnet_resnet50_citys", {"aux": True}, "Leave aux out"),
    ("deeplab_v3b_plus_wideresnet_citys", {"dilated": False}, "Leave dilated out"),
    ("mobile_pose_resnet18_v1b", {"base_attrs": ("features",)}, "Leave base_attrs out"),
    ("resnet50_v1_int8", {"tag": "abc"}, r"pretrained='abc'"),
])
def test_keywords_the_hub_cannot_honour_say_what_to_do(name: str, keywords_: dict[str, Any], message: str) -> None:
    with pytest.raises(ModelBuildError, match=message):
        gluon_hub.load(name, **keywords_)


def test_monodepth2_takes_more_input_frames_and_starts_its_encoder_as_gluoncv() -> None:
    """``num_input_images`` stacks frames on the channels; ``pretrained_base`` copies the ImageNet
    ResNet into the encoder, the stem's kernel repeated per frame and divided by their count."""
    import numpy as np

    from gluon_cv_core.common.backbones.resnetv1b import resnet_v1b
    from gluon_cv_core.depth.models.monodepth2 import monodepth2_posenet

    depth = gluon_hub.load("monodepth2_resnet18_kitti_mono_640x192", num_input_images=2)
    assert len(depth(mx.nd.zeros((1, 6, 64, 96)))) == 4
    resnet = resnet_v1b(18)
    resnet.initialize(mx.init.Xavier())
    resnet(mx.nd.zeros((1, 3, 32, 32)))
    pose = monodepth2_posenet(num_input_images=3)
    pose.encoder.start_from(resnet)
    stem = resnet.conv1.weight.data().asnumpy()
    np.testing.assert_allclose(pose.encoder.encoder.conv1.weight.data().asnumpy(),
                               np.concatenate([stem] * 3, axis=1) / 3, rtol=1e-6)
    np.testing.assert_array_equal(pose.encoder.encoder.layer4[1].conv2.weight.data().asnumpy(),
                                  resnet.layer4[1].conv2.weight.data().asnumpy())


@pytest.mark.parametrize("name, keywords_", [
    ("i3d_resnet50_v1_kinetics400", {"frozen_stages": 2, "num_stages": 4, "inflate_stride": [1, 1, 1, 1],
                                     "nonlocal_stages": (-1,), "nonlocal_freq": (0, 1, 1, 0)}),
    ("i3d_slow_resnet101_f16s4_kinetics700", {"inflate_freq": (0, 0, 1, 1), "nonlocal_freq": (0, 0, 0, 0)}),
    ("p3d_resnet50_kinetics400", {"block_design": ("A", "B", "C"), "shortcut_type": "B"}),
    ("ssd_300_vgg16_atrous_voc", {"global_pool": False, "min_depth": 128, "predictors_kernel": (3, 3),
                                  "predictors_pad": (1, 1), "reduce_ratio": 1.0, "use_1x1_transition": True,
                                  "use_bn": True}),
    ("yolo3_mobilenet0.25_voc", {"ignore_iou_thresh": 0.7, "pos_iou_thresh": 1.0}),
    ("faster_rcnn_resnet50_v1b_voc", {"additional_output": False, "features": None}),
    ("custom_faster_rcnn_fpn", {"dataset": "custom", "additional_output": False}),
])
def test_gluoncv_defaults_of_action_and_detection_models_build_the_same_shapes(
        name: str, keywords_: dict[str, Any]) -> None:
    assert _shapes(gluon_hub.load(name, **keywords_)) == _shapes(gluon_hub.load(name))


@pytest.mark.parametrize("name, keyword, value", [
    ("i3d_nl5_resnet50_v1_kinetics400", "nonlocal_cfg", {"nonlocal_type": "gaussian"}),
    ("i3d_resnet50_v1_kinetics400", "num_stages", 3),
    ("p3d_resnet50_kinetics400", "block_design", ("A", "A", "A")),
    ("slowfast_4x16_resnet50_kinetics400", "num_block_temp_kernel_slow", 2),
    ("center_net_resnet18_v1b_voc", "heads", object()),
    ("ssd_300_vgg16_atrous_voc", "use_bn", False),
    ("yolo3_mobilenet0.25_voc", "ignore_iou_thresh", 0.5),
    ("faster_rcnn_resnet50_v1b_voc", "top_features", object()),
    ("doublehead_rcnn_resnet50_v1b_voc", "additional_output", True),
    ("custom_faster_rcnn_fpn", "num_box_head_conv", 2),
    ("mask_rcnn_resnet18_v1b_coco", "num_fpn_filters", 128),
])
def test_action_and_detection_keywords_the_hub_cannot_build_are_refused(name: str, keyword: str, value: Any) -> None:
    with pytest.raises(ModelBuildError, match=rf"ValueError: .*{keyword}=.*Leave {keyword} out"):
        gluon_hub.load(name, **{keyword: value})


def test_faster_rcnn_takes_gluoncvs_train_patterns() -> None:
    net = gluon_hub.load("faster_rcnn_resnet50_v1b_voc", train_patterns="rpn")
    trained = net.collect_train_params()
    assert trained and all("rpn" in name for name in trained.keys())
