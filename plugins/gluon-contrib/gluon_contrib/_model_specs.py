"""Specs of the contrib models; imports only gluon_hub's spec classes (no mxnet)."""

from __future__ import annotations

from gluon_hub import InputSpec, ModelSpec

KIM_2014 = "https://arxiv.org/abs/1408.5882"
ZHU_2017 = "https://arxiv.org/abs/1703.10593"

#: Kim (2014), Table 1: SST-2 has 2 classes and a vocabulary of 16,185 words; vectors
#: are the 300-d word2vec ones.
_TEXTCNN_KWARGS = {"vocab_size": 16185, "num_classes": 2, "embed_size": 300}
_TEXTCNN_EMBEDDING = 16185 * 300

_TEXTCNN = {
    "rand": ("textcnn_rand", "randomly initialised word vectors, trained with the model", 1),
    "static": ("textcnn_static", "pretrained word vectors, kept fixed", 1),
    "non-static": ("textcnn_nonstatic", "pretrained word vectors, fine-tuned", 1),
    "multichannel": ("textcnn_multichannel",
                     "two channels of pretrained word vectors, one fixed, one fine-tuned", 2),
}


def _textcnn_specs() -> list[ModelSpec]:
    specs = []
    for mode, (name, words, channels) in _TEXTCNN.items():
        conv = 300 * channels * 100 * (3 + 4 + 5) + 3 * 100
        specs.append(ModelSpec(
            name=name,
            factory=f"gluon_contrib.textcnn:{name}",
            export_graphs="gluon_contrib.textcnn:export_graphs",
            task="text-classification",
            description=f"textCNN-{mode} sentence classifier (Kim, 2014): {words}; "
                        "filter windows 3, 4, 5 with 100 maps each, dropout 0.5",
            kwargs=dict(_TEXTCNN_KWARGS),
            input=InputSpec(shape=(None,), layout="NT", dtype="int32", num_classes=2),
            output_shape=(2,),
            num_params=channels * _TEXTCNN_EMBEDDING + conv + 300 * 2 + 2,
            license="Apache-2.0",
            paper=KIM_2014,
            tags=("textcnn", "cnn", "sentence-classification", mode),
        ))
    return specs


def _cyclegan_specs() -> list[ModelSpec]:
    image = {"layout": "NCHW", "mean": (0.5, 0.5, 0.5), "std": (0.5, 0.5, 0.5)}
    return [
        ModelSpec(
            name="cyclegan_resnet_9blocks",
            factory="gluon_contrib.cyclegan:cyclegan_resnet_generator",
            task="image-to-image-translation",
            description="CycleGAN ResNet generator with 9 residual blocks, for 256x256 "
                        "images (Zhu et al., 2017)",
            kwargs={"n_blocks": 9, "ngf": 64},
            input=InputSpec(shape=(3, 256, 256), **image),
            output_shape=(3, 256, 256),
            num_params=11378179,
            license="Apache-2.0",
            paper=ZHU_2017,
            tags=("cyclegan", "gan", "generator"),
        ),
        ModelSpec(
            name="cyclegan_resnet_6blocks",
            factory="gluon_contrib.cyclegan:cyclegan_resnet_generator",
            task="image-to-image-translation",
            description="CycleGAN ResNet generator with 6 residual blocks, for 128x128 "
                        "images (Zhu et al., 2017)",
            kwargs={"n_blocks": 6, "ngf": 64},
            input=InputSpec(shape=(3, 128, 128), **image),
            output_shape=(3, 128, 128),
            num_params=7837699,
            license="Apache-2.0",
            paper=ZHU_2017,
            tags=("cyclegan", "gan", "generator"),
        ),
        ModelSpec(
            name="cyclegan_patchgan_70",
            factory="gluon_contrib.cyclegan:patchgan_discriminator",
            task="image-discrimination",
            description="70x70 PatchGAN discriminator of CycleGAN: a real/fake score per "
                        "overlapping 70x70 patch (Zhu et al., 2017)",
            kwargs={"ndf": 64, "n_layers": 3},
            input=InputSpec(shape=(3, 256, 256), **image),
            output_shape=(1, 30, 30),
            num_params=2764737,
            license="Apache-2.0",
            paper=ZHU_2017,
            tags=("cyclegan", "gan", "discriminator", "patchgan"),
        ),
    ]


def model_specs() -> list[ModelSpec]:
    """Every contrib model."""
    return _textcnn_specs() + _cyclegan_specs()
