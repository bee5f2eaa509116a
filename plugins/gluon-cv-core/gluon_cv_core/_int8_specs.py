"""The int8 models GluonCV lists (``resnet50_v1_int8``, ``ssd_*_int8`` ...), as gluon_hub builds them.

Each is its float32 model, loaded with the float32 weights GluonCV publishes and quantized
at load time by :func:`gluon_hub.quantize` (oneDNN, CPU only). Calibration is not redone
at load time: measuring ranges needs a few hundred real images (ImageNet's validation set,
VOC's) that neither the hub nor the user's machine has, and ranges measured on anything
else (random or a handful of photographs) would clip real activations. So the output
range of every fused convolution is the one GluonCV calibrated on those images and
recorded in the int8 symbol files its package ships
(``gluoncv/model_zoo/quantized/<name>-symbol.json`` in gluoncv 0.10.5; their sha1 is kept
below for provenance), under the names MXNet 1.9.1 gives the same layers. The last dense
layer of a classifier stays float32, as in GluonCV's files, so logits keep their scale.
Pass ``calib_data=[batches]`` to ``gluon_hub.load`` to calibrate on your own data instead
(fine-tuned weights need it); with random weights (``pretrained=False``) the ranges are
measured on one seeded uniform batch, since recorded ranges describe trained weights only.

Imports only the stdlib and ``gluon_hub.specs`` (and the sibling spec modules, which do the
same): listing stays free of mxnet.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from gluon_hub.specs import ModelSpec

#: int8 name -> (sha1 of GluonCV's int8 symbol file, the recorded output ranges). A range
#: is "<fused layer> <min> <max>": the layer ``sg_mkldnn_conv_<fused layer>`` of MXNet's
#: oneDNN partition (bn: BatchNorm folded, act: ReLU, add: residual sum fused in).
_RECORDED = {
    "resnet50_v1_int8": ("bd99a8276550d31bfd32b13a42104744966db17d", (
        "bn_act_0 0 28.366196; bn_act_1 0 17.692879; bn_act_2 0 15.738866; bn_4 -36.878681 14.089601; "
        "bn_add_act_3 0 14.925311; bn_act_5 0 10.324755; bn_act_6 0 12.012566; bn_add_act_7 0 20.961098; "
        "bn_act_8 0 14.017304; bn_act_9 0 24.763096; bn_add_act_10 0 20.881592; bn_act_11 0 12.303838; "
        "bn_act_12 0 11.038647; bn_14 -16.531317 24.462372; bn_add_act_13 0 23.952017; bn_act_15 0 15.537408; "
        "bn_act_16 0 15.847849; bn_add_act_17 0 18.434828; bn_act_18 0 13.915319; bn_act_19 0 19.091326; "
        "bn_add_act_20 0 20.155378; bn_act_21 0 20.129475; bn_act_22 0 15.679976; bn_add_act_23 0 23.930492; "
        "bn_act_24 0 10.704535; bn_act_25 0 8.525423; bn_27 -12.146319 17.089722; bn_add_act_26 0 18.613106; "
        "bn_act_28 0 11.316041; bn_act_29 0 8.06342; bn_add_act_30 0 14.595169; bn_act_31 0 8.072557; "
        "bn_act_32 0 9.256506; bn_add_act_33 0 13.494219; bn_act_34 0 11.622367; bn_act_35 0 9.71245; "
        "bn_add_act_36 0 14.864284; bn_act_37 0 14.608517; bn_act_38 0 14.155235; bn_add_act_39 0 20.607891; "
        "bn_act_40 0 13.343627; bn_act_41 0 14.61003; bn_add_act_42 0 20.540854; bn_act_43 0 10.681038; "
        "bn_act_44 0 8.364565; bn_46 -25.451092 53.855495; bn_add_act_45 0 54.005638; bn_act_47 0 10.894166; "
        "bn_act_48 0 6.628451; bn_add_act_49 0 70.722534; bn_act_50 0 8.861896; bn_act_51 0 8.543266; "
        "bn_add_act_52 0 80.659859"
    )),
    "mobilenet1.0_int8": ("51f32d20d6dae334a23ee010b6b1ea2f7cc46fff", (
        "bn_act_0 0 23.429403; bn_act_1 0 53.783321; bn_act_2 0 48.81826; bn_act_3 0 40.278053; "
        "bn_act_4 0 24.593645; bn_act_5 0 25.675819; bn_act_6 0 18.093466; bn_act_7 0 18.568243; "
        "bn_act_8 0 15.476743; bn_act_9 0 24.638727; bn_act_10 0 18.475277; bn_act_11 0 20.770248; "
        "bn_act_12 0 15.783651; bn_act_13 0 14.455085; bn_act_14 0 12.018683; bn_act_15 0 23.984909; "
        "bn_act_16 0 13.874047; bn_act_17 0 33.278786; bn_act_18 0 12.887977; bn_act_19 0 28.710047; "
        "bn_act_20 0 18.683052; bn_act_21 0 26.440147; bn_act_22 0 16.25572; bn_act_23 0 33.441959; "
        "bn_act_24 0 15.809774; bn_act_25 0 17.511763; bn_act_26 0 57.9081"
    )),
    "ssd_300_vgg16_atrous_voc_int8": ("1b1a158be28dd71cd9b47792f1759837e314f4d9", (
        "act_0 0 799.7193; act_1 0 2801.6167; act_2 0 5245.5059; act_3 0 6962.9766; "
        "act_4 0 6951.9341; act_5 0 5921.8931; act_6 0 5161.9668; act_7 0 4225.4033; "
        "act_8 0 1302.7924; act_9 0 658.65198; 10 -6.482797 15.419542; act_11 0 422.22012; "
        "act_12 0 186.00043; act_13 0 129.57138; act_14 0 31.570829; act_15 0 10.395283; "
        "16 -8.904353 31.327047; act_17 0 8.586086; act_18 0 10.733885; 19 -14.042579 29.058624; "
        "act_20 0 13.220951; act_21 0 15.064709; 22 -12.862319 27.599642; act_23 0 17.194489; "
        "act_24 0 17.794985; 25 -14.546038 23.415764; act_26 0 19.868343; act_27 0 24.279285; "
        "28 -13.183455 22.051943; 29 -13.670727 4.669396; 30 -4.542309 4.628121; 31 -4.347852 4.3758; "
        "32 -4.141346 4.159054; 33 -4.844325 4.645521; 34 -3.898834 2.374739"
    )),
    "ssd_512_mobilenet1.0_voc_int8": ("f00347e3a4a5390000fc4aa7110758dc568a46bf", (
        "bn_act_0 0 1.97137; bn_act_1 0 4.843816; bn_act_2 0 12.230622; bn_act_3 0 4.503809; "
        "bn_act_4 0 3.454003; bn_act_5 0 4.388649; bn_act_6 0 3.698938; bn_act_7 0 3.953003; "
        "bn_act_8 0 2.041146; bn_act_9 0 3.181829; bn_act_10 0 1.957919; bn_act_11 0 3.375719; "
        "bn_act_12 0 1.671821; bn_act_13 0 3.77707; bn_act_14 0 1.441661; bn_act_15 0 3.497429; "
        "bn_act_16 0 1.592348; bn_act_17 0 5.516345; bn_act_18 0 1.71531; bn_act_19 0 3.596492; "
        "bn_act_20 0 1.897627; bn_act_21 0 3.805538; bn_act_22 0 9.088818; 23 -9.174813 19.190063; "
        "bn_act_24 0 3.597511; bn_act_25 0 1.158367; bn_act_26 0 2.240377; bn_act_27 0 7.350129; "
        "28 -20.917624 38.167236; bn_act_29 0 7.552732; bn_act_30 0 8.410916; 31 -9.307992 21.583117; "
        "bn_act_32 0 7.92376; bn_act_33 0 8.464465; 34 -9.638062 17.421074; bn_act_35 0 8.838045; "
        "bn_act_36 0 7.62183; 37 -4.840173 10.199381; bn_act_38 0 7.274212; bn_act_39 0 6.971924; "
        "40 -6.174638 13.234236; 41 -12.747149 4.876158; 42 -4.075301 4.302043; 43 -3.929893 4.123853; "
        "44 -3.787183 3.868445; 45 -2.954468 2.882389; 46 -3.491082 3.18898"
    )),
    "ssd_512_resnet50_v1_voc_int8": ("e959a862e74a20e0a5eb49bc42d2b56ab5e05b6e", (
        "bn_act_0 0 4.332401; bn_act_1 0 2.68699; bn_act_2 0 2.207719; bn_4 -4.511564 2.264818; "
        "bn_add_act_3 0 2.577055; bn_act_5 0 2.307617; bn_act_6 0 4.313608; bn_add_act_7 0 2.829698; "
        "bn_act_8 0 2.742234; bn_act_9 0 4.538939; bn_add_act_10 0 3.345585; bn_act_11 0 1.899835; "
        "bn_act_12 0 2.669875; bn_14 -1.961015 1.988914; bn_add_act_13 0 2.61254; bn_act_15 0 2.297476; "
        "bn_act_16 0 2.287407; bn_add_act_17 0 3.371729; bn_act_18 0 2.269738; bn_act_19 0 3.264528; "
        "bn_add_act_20 0 3.448743; bn_act_21 0 3.416933; bn_act_22 0 3.628044; bn_add_act_23 0 4.60073; "
        "bn_act_24 0 1.802472; bn_act_25 0 1.549805; bn_27 -1.766548 2.689998; bn_add_act_26 0 3.006491; "
        "bn_act_28 0 1.235364; bn_act_29 0 1.995211; bn_add_act_30 0 2.863562; bn_act_31 0 2.086985; "
        "bn_act_32 0 2.43478; bn_add_act_33 0 3.269181; bn_act_34 0 2.594996; bn_act_35 0 1.965995; "
        "bn_add_act_36 0 4.055032; bn_act_37 0 2.492171; bn_act_38 0 1.502743; bn_add_act_39 0 4.041976; "
        "bn_act_40 0 2.213554; bn_act_41 0 2.695974; bn_add_act_42 0 7.908109; 43 -8.495779 19.659945; "
        "bn_act_44 0 1.884383; bn_act_45 0 1.644229; bn_47 -2.576477 1.544881; bn_add_act_46 0 1.779881; "
        "bn_act_48 0 2.775825; bn_act_49 0 2.255455; bn_add_act_50 0 7.455605; bn_act_51 0 1.807768; "
        "bn_act_52 0 1.883651; bn_add_act_53 0 8.699316; 54 -8.671446 28.579041; bn_act_55 0 10.488618; "
        "bn_act_56 0 11.090785; 57 -7.792776 24.046902; bn_act_58 0 7.779199; bn_act_59 0 8.386677; "
        "60 -9.823511 19.041187; bn_act_61 0 8.299225; bn_act_62 0 7.178945; 63 -7.385983 11.874625; "
        "bn_act_64 0 6.257237; bn_act_65 0 7.613858; 66 -5.889025 12.039816; 67 -12.847954 4.708094; "
        "68 -4.375725 4.54025; 69 -3.978005 4.226004; 70 -3.761112 4.201579; 71 -2.89695 2.977773; "
        "72 -3.171603 2.902189"
    )),
    "ssd_512_vgg16_atrous_voc_int8": ("6f1741c3ea8b4f290054d3f09957d6fc0387b99f", (
        "act_0 0 832.22217; act_1 0 3649.147; act_2 0 5728.4409; act_3 0 8342.1406; "
        "act_4 0 9537.6611; act_5 0 8158.4722; act_6 0 7653.9541; act_7 0 4286.8848; "
        "act_8 0 1701.7477; act_9 0 823.32922; 10 -6.742505 15.165039; act_11 0 550.79657; "
        "act_12 0 262.89508; act_13 0 169.53241; act_14 0 49.37286; act_15 0 12.38759; "
        "16 -14.424582 35.013943; act_17 0 10.076336; act_18 0 10.388749; 19 -12.462226 31.706652; "
        "act_20 0 17.176729; act_21 0 16.528648; 22 -14.558433 31.651865; act_23 0 21.921522; "
        "act_24 0 22.23315; 25 -16.012779 25.814215; act_26 0 31.320433; act_27 0 33.492085; "
        "28 -14.922727 20.189611; act_29 0 41.71682; act_30 0 27.027159; 31 -15.738542 18.919998; "
        "32 -13.463578 5.037223; 33 -5.132103 4.927182; 34 -4.391596 4.420295; 35 -4.054255 4.537238; "
        "36 -4.483447 4.179194; 37 -3.472292 2.919856; 38 -3.667528 2.413904"
    )),
}

_GLUONCV_FILES = "gluoncv 0.10.5, gluoncv/model_zoo/quantized/{name}-symbol.json"


def recorded_ranges(fp32: str) -> dict[str, tuple[float, float]]:
    """The recorded ranges of the int8 model of ``fp32``, as ``gluon_hub.quantize(thresholds=...)``
    takes them (the int8 entries' factory calls this when it builds the model)."""
    ranges = {}
    for entry in _RECORDED[f"{fp32}_int8"][1].split(";"):
        layer, low, high = entry.split()
        ranges[f"sg_mkldnn_conv_{layer}_output"] = (float(low), float(high))
    return ranges


def _int8_spec(name: str, fp32: ModelSpec) -> ModelSpec:
    classifier = fp32.task == "image-classification"
    weights = tuple(replace(w, metrics=(), description=(
        f"the float32 weights of {fp32.name}, quantized at load with the output ranges GluonCV "
        f"recorded ({_GLUONCV_FILES.format(name=name)}, sha1 {_RECORDED[name][0]})"
    )) for w in fp32.weights)
    return replace(
        fp32,
        name=name,
        factory="gluon_hub._quantize:int8_model",
        description=f"{fp32.description}; int8 (oneDNN, CPU only, inference only), quantized at load",
        kwargs={
            "fp32": fp32.name,
            "input_shape": list(fp32.input.shape),
            "thresholds": "gluon_cv_core._int8_specs:recorded_ranges",
            "exclude_operators": ["FullyConnected"] if classifier else [],
        },
        weights=weights,
        tags=(*fp32.tags, "int8"),
    )


@lru_cache(maxsize=1)
def _specs() -> tuple[ModelSpec, ...]:
    from ._detection_specs import detection_specs
    from ._model_specs import model_specs

    fp32 = {spec.name: spec for spec in model_specs() + detection_specs()}
    return tuple(_int8_spec(name, fp32[name[: -len("_int8")]]) for name in _RECORDED)


def int8_specs() -> list[ModelSpec]:
    """GluonCV's int8 classification and SSD names, each quantized from its float32 model."""
    return list(_specs())
