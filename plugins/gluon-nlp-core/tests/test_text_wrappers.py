"""SentencePiece, Moses and jieba wrappers give GluonNLP 0.10's wrappers' output.

The SentencePiece models are trained here on generated text; sampling is compared under
the same sentencepiece seed on both sides.
"""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sentencepiece

from gluon_nlp_core.text import (
    JiebaTokenizer,
    SacreMosesDetokenizer,
    SacreMosesTokenizer,
    SentencepieceDetokenizer,
    SentencepieceTokenizer,
)

_SYLLABLES = "ka to ri shu men ber gar la vo in ex ter pre con ing tion al ly".split()
_PUNCT = [",", ".", "!", "?", ";", ":", "'s", "n't", "-", "&", "<", "\"", "'", "(", ")", "$5",
          "3.14", "1,000", "e-mail", "U.S.", "@", "#", "...", "é", "ß"]


def _english(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    lines = []
    for _ in range(n):
        words = []
        for _ in range(rng.randint(1, 20)):
            if rng.random() < 0.75:
                word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 3)))
                words.append(word.capitalize() if rng.random() < 0.2 else word)
            else:
                words.append(rng.choice(_PUNCT))
        lines.append(" ".join(words) if rng.random() < 0.7 else "".join(words[:4]))
    return lines + ["", "  spaced   out  ", "Mr. Smith's car isn't here & (it's) \"red\"."]


def _chinese(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = ["我", "来到", "北京", "清华大学", "小明", "硕士", "毕业", "于", "中国科学院", "计算所",
             "后", "在", "日本", "京都大学", "深造", "今天", "天气", "很好", "我们", "去", "公园",
             "散步", "，", "。", "！", "GluonNLP", "2024", " ", "  ", "自然语言处理", "模型"]
    return ["".join(rng.choice(words) for _ in range(rng.randint(1, 15))) for _ in range(n)]


@pytest.fixture(scope="module", params=["unigram", "bpe"])
def spm_model(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("spm")
    corpus = root / "corpus.txt"
    corpus.write_text("\n".join(_english(400, seed=1)), encoding="utf-8")
    sentencepiece.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(root / request.param), vocab_size=120,
        model_type=request.param, minloglevel=2, num_threads=1)
    return root / f"{request.param}.model"


@pytest.mark.mxnet
def test_sentencepiece_best_segmentation(gluonnlp, spm_model: Path) -> None:
    ours = SentencepieceTokenizer(spm_model)
    detokenize, reference = SentencepieceDetokenizer(spm_model), \
        gluonnlp.data.SentencepieceDetokenizer(str(spm_model))
    processor = sentencepiece.SentencePieceProcessor(model_file=str(spm_model))
    texts = _english(150, seed=2)
    pieces = [ours(t) for t in texts]
    # GluonNLP asks for a 0-best "sample" here, which sentencepiece >= 0.1.98 refuses;
    # what it documents for num_best=0 is no sampling: the best segmentation
    with pytest.raises((RuntimeError, ValueError), match="nbest_size"):
        gluonnlp.data.SentencepieceTokenizer(str(spm_model))(texts[0])
    assert pieces == [processor.EncodeAsPieces(t) for t in texts]
    assert SentencepieceTokenizer(spm_model, num_best=1)(texts[0]) == pieces[0]
    assert [detokenize(p) for p in pieces] == [reference(p) for p in pieces]
    assert detokenize(pieces[-1]) == texts[-1]
    assert len(ours) == len(reference) == 120 and ours.tokens == reference.tokens


@pytest.mark.mxnet
@pytest.mark.parametrize("num_best, alpha", [(-1, 0.2), (5, 0.5)])
def test_sentencepiece_sampling_equals_gluonnlp(gluonnlp, spm_model: Path, num_best: int,
                                                alpha: float) -> None:
    ours = SentencepieceTokenizer(spm_model, num_best=num_best, alpha=alpha)
    reference = gluonnlp.data.SentencepieceTokenizer(str(spm_model), num_best, alpha)
    texts = _english(60, seed=3)
    sentencepiece.set_random_generator_seed(11)
    expected = [reference(t) for t in texts]
    sentencepiece.set_random_generator_seed(11)
    assert [ours(t) for t in texts] == expected
    best = SentencepieceTokenizer(spm_model)
    assert any(p != best(t) for p, t in zip(expected, texts))  # it did sample


def test_sentencepiece_bad_paths(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no SentencePiece model"):
        SentencepieceTokenizer(tmp_path / "missing.model")
    junk = tmp_path / "junk.model"
    junk.write_text("not a model")
    with pytest.raises(ValueError, match="not a SentencePiece model"):
        SentencepieceDetokenizer(junk)


@pytest.mark.mxnet
def test_moses_equals_gluonnlp(gluonnlp) -> None:
    ours, reference = SacreMosesTokenizer(), gluonnlp.data.SacreMosesTokenizer()
    detok, detok_ref = SacreMosesDetokenizer(), gluonnlp.data.SacreMosesDetokenizer()
    texts = _english(200, seed=4)
    tokens = [ours(t) for t in texts]
    assert tokens == [reference(t) for t in texts]
    assert [ours(t, return_str=True) for t in texts] == [reference(t, True) for t in texts]
    assert "&amp;" in ours("a & b")  # sacremoses' default escaping, kept as in GluonNLP
    assert [detok(t) for t in tokens] == [detok_ref(t) for t in tokens]
    assert [detok(t, return_str=False) for t in tokens] == [detok_ref(t, False) for t in tokens]
    assert SacreMosesDetokenizer(return_str=False)(["a", "b"]) == detok_ref(["a", "b"], False)


@pytest.mark.mxnet
def test_jieba_equals_gluonnlp(gluonnlp) -> None:
    ours, reference = JiebaTokenizer(), gluonnlp.data.JiebaTokenizer()
    texts = _chinese(150, seed=5) + ["我来到北京清华大学", " ", ""]
    expected = [reference(t) for t in texts]
    assert [ours(t) for t in texts] == expected
    assert ours("我来到北京清华大学") == ["我", "来到", "北京", "清华大学"]
    assert all(" " not in tokens and "" not in tokens for tokens in expected)


@pytest.mark.parametrize("module, make", [
    ("sentencepiece", "SentencepieceTokenizer('x.model')"),
    ("sacremoses", "SacreMosesTokenizer()"),
    ("sacremoses", "SacreMosesDetokenizer()"),
    ("jieba", "JiebaTokenizer()"),
])
def test_missing_library_names_the_package(module: str, make: str) -> None:
    code = textwrap.dedent(f"""
        import sys
        sys.modules[{module!r}] = None  # as if not installed
        from gluon_nlp_core.text import *
        try:
            {make}
        except ImportError as err:
            print(err)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert f"pip install {module}" in out and make.split("(")[0] in out
