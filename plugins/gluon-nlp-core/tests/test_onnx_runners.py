"""The text models' ONNX runners (``gluon_nlp_core.onnx_runner``) against the MXNet models.

Each model is a small configuration with every parameter drawn at random from a fixed seed,
saved, exported by name from that file (``gluon_hub.export``: a graph file per graph) and
loaded by name from the same file in MXNet. The runner, built by ``gluon_hub.runtime.load``,
tokenizes with the plugin's tokenizers and a vocabulary made here; MXNet gets the same ids.
BERT-family features and heads agree within 1e-4 of each output's scale; GPT-2's greedy
generation over the exported key/value cache gives exactly the tokens of the plugin's own
greedy decoding (``BeamSearchSampler`` with one beam) over the MXNet model.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gluon_hub
import gluon_hub.runtime
from gluon_hub.compat import mx
from gluon_nlp_core.decoding import BeamSearchSampler
from gluon_nlp_core.text import BERT_SPECIAL_TOKENS, GPT2BPETokenizer, Vocab

pytest.importorskip("onnxruntime")
pytestmark = [pytest.mark.portability, pytest.mark.mxnet]

TOLERANCE = 1e-4
SMALL = dict(num_layers=2, units=8, hidden_size=16, num_heads=2, max_length=64)
WORDS = ["the", "cat", "sat", "on", "mat", "dog", "ran", "##s", "a", ".", "home"]
BERT_VOCAB = Vocab.from_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS], **BERT_SPECIAL_TOKENS)
TEXTS = ["The cat sat on the mat.", "A dog ran home"]
PAIRS = ["cats sat", "the dogs ran on a mat ."]
CORPUS = "the cat sat on the mat. a dog ran home, the cats ran on"


@pytest.fixture(scope="module")
def merges(tmp_path_factory) -> Path:
    """A few byte-level BPE merges (``Ġ`` is the space symbol)."""
    path = tmp_path_factory.mktemp("bpe") / "merges.txt"
    path.write_text("#version: 0.2\nh e\nt he\nĠ the\na t\nc at\nĠ cat\nĠ s\nĠs at\n", encoding="utf-8")
    return path


def _bpe_vocab(merges: Path, *specials: str, **named: str) -> Vocab:
    tokens = list(dict.fromkeys(GPT2BPETokenizer(merges)(CORPUS)))
    return Vocab.from_tokens([*specials, *tokens], **named)


def _exported(tmp_path: Path, name: str, **kwargs) -> tuple[Path, object]:
    """The ONNX path the graphs were exported under, and the MXNet model of the same weights."""
    net = gluon_hub.load(name, **kwargs)
    tokens, length, masked = mx.nd.ones((1, 2)), mx.nd.array([2]), mx.nd.zeros((1, 1))
    net(*{"bert_12_768_12": (tokens, tokens, length, masked), "roberta_12_768_12": (tokens, length, masked),
          "distilbert_6_768_12": (tokens, length), "gpt2_117m": (tokens,)}[name])  # shapes the parameters
    rng = np.random.RandomState(0)
    for key, param in sorted(net.collect_params().items()):
        centre = 1.0 if key.endswith("gamma") else 0.0
        param.set_data(mx.nd.array(rng.normal(centre, 0.4, param.shape)))
    params = tmp_path / f"{name}.params"
    net.save_parameters(str(params))
    path = tmp_path / f"{name}.onnx"
    gluon_hub.export(name, path, format="onnx", pretrained=str(params), **kwargs)
    return path, gluon_hub.load(name, pretrained=str(params), **kwargs)


def _close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.shape == want.shape, f"{what}: shape {got.shape}, MXNet {want.shape}"
    rel = float(np.abs(got - want).max()) / max(float(np.abs(want).max()), 1e-30)
    assert rel <= TOLERANCE, f"{what}: max relative difference {rel:.2e}"


@pytest.mark.parametrize("name, heads", [
    ("bert_12_768_12", ("pooled", "next_sentence", "masked_lm")),
    ("distilbert_6_768_12", ()),
    ("roberta_12_768_12", ("masked_lm",)),
])
def test_encoder_features_and_heads_equal_the_mxnet_model(tmp_path, merges, name, heads):
    roberta = name.startswith("roberta")
    if roberta:
        vocab = _bpe_vocab(merges, "<s>", "<pad>", "</s>", "<unk>", "<mask>", unknown_token="<unk>",
                           bos_token="<s>", eos_token="</s>", padding_token="<pad>", mask_token="<mask>")
        options = dict(vocab=vocab, merges=merges, max_length=64)
    else:
        vocab, options = BERT_VOCAB, dict(vocab=BERT_VOCAB, lower=True, max_length=64)
    path, net = _exported(tmp_path, name, vocab_size=len(vocab), **SMALL)
    runner = gluon_hub.runtime.load(name, path, **options)
    assert type(runner).__name__ == "TextEncoder" and runner.session.provider == "CPUExecutionProvider"
    assert (runner.pooler, runner.classifier, runner.masked_lm) == (
        "pooled" in heads, "next_sentence" in heads, "masked_lm" in heads)

    pairs = None if name.startswith("distil") else PAIRS
    ids, segments, lengths = runner.encode(TEXTS, pairs)
    assert lengths.tolist() != [ids.shape[1]] * 2, "one row must be padded"
    if not roberta:  # the fine-tuning script's encoding: [CLS] a [SEP] b [SEP]
        first = ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"]
        assert vocab.to_tokens(ids[0, :9].tolist()) == first
        assert segments[0, :9].tolist() == [0] * 9 and (pairs is None or segments[0, 9:lengths[0]].all())
    else:
        assert ids[:, 0].tolist() == [vocab["<s>"]] * 2 and not segments.any()
    masked = np.array([[1, 3], [2, 0]], np.int32)
    args = [mx.nd.array(ids)] + ([mx.nd.array(segments)] if name.startswith("bert") else [])
    args.append(mx.nd.array(lengths))
    if "masked_lm" in heads:
        args.append(mx.nd.array(masked))
    want = net(*args)
    want = [w.asnumpy() for w in (want if isinstance(want, (list, tuple)) else [want])]
    got = runner(ids, segments, lengths, masked)
    assert len(got) == len(want) == 1 + len(heads)
    for length, row in zip(lengths, range(2)):  # padded positions are no output anyone reads
        _close(got[0][row, :length], want[0][row, :length], f"{name} sequence row {row}")
    for index, head in enumerate(heads, 1):
        _close(got[index], want[index], f"{name} {head}")

    features = runner.features(TEXTS, pairs)
    for row, entry in enumerate(features):
        _close(entry["sequence"], want[0][row, :lengths[row]], f"{name} features row {row}")
        assert ("pooled" in entry) == ("pooled" in heads)
        if "pooled" in entry:
            _close(entry["pooled"], want[1][row], f"{name} pooled features")
    alone = runner.features(TEXTS[1:], pairs[1:] if pairs else None)[0]["sequence"]
    _close(alone, features[1]["sequence"], f"{name}: a text alone and padded in a batch")

    if "next_sentence" in heads:
        logits = want[2].astype(np.float64)
        probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        np.testing.assert_allclose(runner.next_sentence(TEXTS, PAIRS), probs, rtol=1e-4, atol=1e-6)
    else:
        with pytest.raises(ValueError, match="exported without the next-sentence classifier"):
            runner.next_sentence(TEXTS, PAIRS)


def test_fill_mask_ranks_the_masked_lm_heads_tokens(tmp_path):
    path, net = _exported(tmp_path, "bert_12_768_12", vocab_size=len(BERT_VOCAB), **SMALL)
    runner = gluon_hub.runtime.load("bert_12_768_12", path, vocab=BERT_VOCAB)
    text = "the [MASK] sat on the [MASK]"
    ids, segments, lengths = runner.encode([text])
    assert ids[0].tolist().index(BERT_VOCAB["[MASK]"]) == 2
    *_, scores = net(mx.nd.array(ids), mx.nd.array(segments), mx.nd.array(lengths), mx.nd.array([[2, 6]]))
    best = scores.asnumpy()[0].argmax(axis=1)
    found = runner.fill_mask([text], topk=3)
    assert [[token for token, _ in mask] for mask in found[0]][0][0] == BERT_VOCAB.idx_to_token[best[0]]
    assert [mask[0][0] for mask in found[0]] == BERT_VOCAB.to_tokens(best.tolist())
    assert all(len(mask) == 3 and mask[0][1] >= mask[1][1] >= mask[2][1] for mask in found[0])
    with pytest.raises(ValueError, match=r"every text needs a mask token '\[MASK\]'"):
        runner.fill_mask(["the cat"])


def _greedy_mxnet(net, prompt: list[int], steps: int, eos_id: int) -> list[int]:
    """The plugin's beam search with one beam over the MXNet model: greedy decoding."""
    def step(tokens, states):
        scores, states = net(tokens.reshape((-1, 1)).astype("float32"), states)
        return scores[:, -1], states

    _, states = net(mx.nd.array([prompt[:-1]]))
    samples, _, length = BeamSearchSampler(1, step, eos_id=eos_id, max_length=steps)(mx.nd.array(prompt[-1:]), states)
    return samples[0, 0, 1:int(length[0, 0].asscalar())].asnumpy().tolist()


def test_gpt2_greedy_generation_over_the_cache_is_the_mxnet_models(tmp_path, merges):
    vocab = _bpe_vocab(merges, "<|endoftext|>", unknown_token=None, eos_token="<|endoftext|>")
    path, net = _exported(tmp_path, "gpt2_117m", vocab_size=len(vocab), units=8, num_layers=2, num_heads=2,
                          max_length=32)
    runner = gluon_hub.runtime.load("gpt2_117m", path, vocab=vocab, merges=merges, max_length=32)
    assert type(runner).__name__ == "TextGenerator" and runner.eos_id == 0
    prompt = runner.encode("the cat sat on")
    assert vocab.to_tokens(prompt) == ["the", "Ġcat", "Ġsat", "Ġ", "o", "n"]
    got = runner.generate_ids(prompt, 12)
    want = _greedy_mxnet(net, prompt, 12, eos_id=runner.eos_id)
    # the sampler appends the end token to a beam still running after its 12 steps
    assert got == (want if got[-1] == runner.eos_id else want[:-1]), (got, want)
    text = runner.generate("the cat sat on", 12)
    assert text == runner.decode(got[:-1] if got[-1] == runner.eos_id else got)
    assert runner.generate_ids(prompt, 5, top_k=1, seed=3) == got[:5]  # top-1 sampling is greedy
    drawn = runner.generate_ids(prompt, 8, top_k=5, seed=3)
    assert drawn == runner.generate_ids(prompt, 8, top_k=5, seed=3)
    assert len(runner.generate_ids(prompt, 40)) <= 32 - len(prompt)  # the positions run out
    with pytest.raises(ValueError, match="top_k must be at least 1"):
        runner.generate_ids(prompt, 3, top_k=0)


def test_text_runners_name_the_graph_files_they_need(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"runs as the graphs prompt, step, but .*nowhere-prompt\.onnx, "
                       r".*nowhere-step\.onnx are missing; gluon_hub\.export\('gpt2_117m'"):
        gluon_hub.runtime.load("gpt2_117m", tmp_path / "nowhere.onnx")
    with pytest.raises(KeyError, match=r"no onnx file of graph 'valid_length' is known for model "
                       r"'nlp/bert_12_768_12'.*gluon-hub convert"):
        gluon_hub.runtime.load("bert_12_768_12")  # nothing converted: the command that converts it
