"""Quiet by default (issue 29, item 14): the README's fine-tuning pattern (load BERT, wrap it in
a head, ``net.initialize()``) prints none of MXNet's "already initialized" warnings (162 for
BERT-base before), keeps the encoder's weights, and a user's own warning still shows.

The snippet is the README's own, run in a fresh process whose real stderr is read.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _readme_snippet() -> str:
    """The README's python block that builds a ``BERTClassifier``."""
    blocks = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)
    found = [b for b in blocks if "BERTClassifier(bert" in b]
    assert len(found) == 1, "the README should show the fine-tuning head once"
    return found[0]


def _run(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_the_readme_fine_tuning_snippet_warns_nothing_and_a_users_warning_shows() -> None:
    code = _readme_snippet() + "\nimport warnings\nwarnings.warn('the users own warning')\n"
    done = _run(code)
    assert "(1, 2)" in done.stdout
    assert "already initialized" not in done.stderr, done.stderr[-3000:]
    assert "the users own warning" in done.stderr


HEADS = """
from gluon_hub.compat import mx
from gluon_nlp_core.models.bert import BERTClassifier, BERTForQA, bert_12_768_12
from gluon_nlp_core.models.roberta import RoBERTaClassifier, roberta_12_768_12

small = dict(vocab_size=50, num_layers=1, units=8, hidden_size=16, num_heads=2, use_decoder=False)
tokens = mx.nd.array([[2, 7, 9, 3]])
bert_inputs = (tokens, mx.nd.zeros_like(tokens), mx.nd.array([4]))
for head, encoder, inputs in ((BERTClassifier, bert_12_768_12(use_classifier=False, **small), bert_inputs),
                              (BERTForQA, bert_12_768_12(use_classifier=False, use_pooler=False, **small), bert_inputs),
                              (RoBERTaClassifier, roberta_12_768_12(**small), (tokens, mx.nd.array([4])))):
    encoder.initialize(mx.init.Constant(0.5))
    encoder(*inputs)  # the encoder has its values, as after loading a file
    before = {name: p.data().copy() for name, p in encoder.collect_params().items()}
    net = head(encoder)
    net.initialize()
    net(*inputs).wait_to_read()
    def same():
        return [(p.data() == before[n]).min().asscalar() == 1 for n, p in encoder.collect_params().items()]
    assert all(same()), head  # the encoder kept its values
    net.initialize(mx.init.Constant(0.25), force_reinit=True)  # MXNet's meaning: everything again
    assert not all(same()), head
print("ok")
"""


def test_every_head_initialises_only_what_has_no_value_and_force_reinit_still_does_all() -> None:
    done = _run(HEADS)
    assert done.stdout.strip() == "ok"
    assert "already initialized" not in done.stderr, done.stderr[-3000:]
