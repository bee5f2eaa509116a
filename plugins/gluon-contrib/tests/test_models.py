"""Architectures against the papers: parameter counts, shapes and hyper-parameters."""

from __future__ import annotations

import pytest

import gluon_hub
from gluon_hub.compat import mx

nn = mx.gluon.nn


def _count(net) -> int:
    return sum(p.data().size for p in net.collect_params().values())


@pytest.mark.parametrize(
    "name, size, params, output",
    [
        # Zhu et al. (2017): 9 blocks at 256x256 with ngf=64; reference implementation's count
        ("cyclegan_resnet_9blocks", 256, 11_378_179, (1, 3, 256, 256)),
        ("cyclegan_resnet_6blocks", 128, 7_837_699, (1, 3, 128, 128)),
        # the 70x70 PatchGAN gives a 30x30 map of scores for a 256x256 image
        ("cyclegan_patchgan_70", 256, 2_764_737, (1, 1, 30, 30)),
    ],
)
def test_cyclegan_matches_the_paper(name, size, params, output):
    net = gluon_hub.load(name)
    assert net(mx.nd.zeros((1, 3, size, size))).shape == output
    assert _count(net) == params


def test_generator_keeps_any_multiple_of_four_and_ends_in_tanh():
    net = gluon_hub.load("cyclegan_resnet_6blocks", ngf=8)
    out = net(mx.nd.random.normal(0, 5, shape=(2, 3, 36, 44)))
    assert out.shape == (2, 3, 36, 44)
    assert float(out.abs().max().asscalar()) <= 1.0


def test_patchgan_receptive_field_is_70_pixels():
    net = gluon_hub.load("cyclegan_patchgan_70")
    convs = [b for b in net.features if isinstance(b, nn.Conv2D)]
    field = 1
    for conv in reversed(convs):
        field = (field - 1) * conv._kwargs["stride"][0] + conv._kwargs["kernel"][0]
    assert field == 70
    assert [c._kwargs["stride"][0] for c in convs] == [2, 2, 2, 1, 1]


def test_textcnn_follows_kim_2014():
    net = gluon_hub.load("textcnn_rand", vocab_size=50, num_classes=6)
    assert net(mx.nd.zeros((3, 12))).shape == (3, 6)
    convs = list(net.convs)
    assert [c._kwargs["kernel"] for c in convs] == [(3,), (4,), (5,)]
    assert {c._channels for c in convs} == {100}
    assert net.dropout._rate == 0.5
    # embedding 50x300, convolutions 300*100*(3+4+5) + 300 biases, output 300*6 + 6
    assert _count(net) == 50 * 300 + 360_300 + 1_806


@pytest.mark.parametrize(
    "name, trainable_embeddings, channels",
    [("textcnn_rand", 1, 1), ("textcnn_static", 0, 1), ("textcnn_nonstatic", 1, 1),
     ("textcnn_multichannel", 1, 2)],
)
def test_textcnn_variants_differ_in_their_word_vectors(name, trainable_embeddings, channels):
    net = gluon_hub.load(name, vocab_size=30, embed_size=10)
    embeddings = [p for n, p in net.collect_params().items() if "embedding" in n]
    assert len(embeddings) == channels
    assert sum(p.grad_req != "null" for p in embeddings) == trainable_embeddings
    assert net.convs[0].weight.shape == (100, 10 * channels, 3)


def test_textcnn_loads_pretrained_vectors_into_every_channel():
    net = gluon_hub.load("textcnn_multichannel", vocab_size=4, embed_size=3)
    vectors = mx.nd.arange(12).reshape((4, 3))
    net.set_embedding(vectors)
    assert (net.embedding.weight.data() == vectors).min() == 1
    assert (net.static_embedding.weight.data() == vectors).min() == 1
    with pytest.raises(ValueError, match=r"\(4, 3\)"):
        net.set_embedding(mx.nd.zeros((5, 3)))


def test_textcnn_refuses_unknown_modes_and_bad_sizes():
    from gluon_contrib.textcnn import TextCNN

    with pytest.raises(ValueError, match="multichannel"):
        TextCNN(10, 2, mode="dynamic")
    with pytest.raises(ValueError, match="vocab_size"):
        TextCNN(0, 2)


def test_specs_declare_what_the_models_are():
    for name in gluon_hub.list_models(plugin="contrib"):
        spec = gluon_hub.info(name)
        assert spec.paper.startswith("https://arxiv.org/abs/")
    assert gluon_hub.info("textcnn_static").task == "text-classification"
    assert gluon_hub.info("textcnn_static").paper == "https://arxiv.org/abs/1408.5882"
