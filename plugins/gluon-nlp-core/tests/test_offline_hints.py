"""Offline without its file, a word embedding's, vocabulary's or tokenizer file's hint is the
hub's prefetch of its name (they are hub entries, issue 33 item 3), whether it was loaded through
the hub or through this plugin's own functions. Run as printed, each asks the mirror for the file.

No published file can be served here (their sha1 is fixed), so a loopback mirror answers
with other bytes: the command must request the file's path and report the expected hash of
the embedding's or vocabulary's own ``FileRef``. The public host is kept out of reach by a
refused proxy, so the test never downloads anything (issue 29, item 11).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from gluon_hub.publishing import serve
from gluon_nlp_core.text import bpe_ranks_file, embedding_source, vocab_file

CASES = {
    "word embedding": ("from gluon_nlp_core.text import load_embedding; load_embedding('glove.6B.50d')",
                       embedding_source("glove.6B.50d").file_ref(),
                       "gluon-hub cache prefetch --kind embeddings nlp/glove.6B.50d"),
    "hub embedding": ("import gluon_hub; gluon_hub.load_embedding('glove.6B.50d')",
                      embedding_source("glove.6B.50d").file_ref(),
                      "gluon-hub cache prefetch --kind embeddings nlp/glove.6B.50d"),
    "vocabulary": ("from gluon_nlp_core.text import load_vocab; load_vocab('book_corpus_wiki_en_uncased')",
                   vocab_file("book_corpus_wiki_en_uncased"),
                   "gluon-hub cache prefetch --kind vocabularies nlp/book_corpus_wiki_en_uncased"),
    "hub vocabulary": ("import gluon_hub; gluon_hub.load_vocabulary('wikitext-2')", vocab_file("wikitext-2"),
                       "gluon-hub cache prefetch --kind vocabularies nlp/wikitext-2"),
    "bpe merges": ("from gluon_nlp_core.text import GPT2BPETokenizer; GPT2BPETokenizer()", bpe_ranks_file(),
                   "gluon-hub cache prefetch --kind vocabularies nlp/openai_webtext_bpe_ranks"),
}


@pytest.mark.parametrize("what", CASES)
def test_offline_hint_fetches_the_very_file(tmp_path: Path, what: str) -> None:
    call, ref, expected = CASES[what]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GLUON_HUB_")}
    env.update(GLUON_HUB_HOME=str(tmp_path / "home"), GLUON_HUB_CONFIG=str(tmp_path / "none.json"),
               GLUON_HUB_PROGRESS="0", GLUON_HUB_RETRIES="0", HTTPS_PROXY="http://127.0.0.1:9",
               HTTP_PROXY="http://127.0.0.1:9", NO_PROXY="127.0.0.1",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    missing = subprocess.run([sys.executable, "-c", call], env=dict(env, GLUON_HUB_OFFLINE="1"),
                             capture_output=True, text=True, timeout=300)
    assert missing.returncode == 1
    found = re.search(r"on a machine with network access run: (.+?) ; then copy the cache", missing.stderr)
    assert found, missing.stderr
    command = found.group(1)
    assert command.startswith(expected), command

    mirror = tmp_path / "mirror"
    (mirror / ref.filename).parent.mkdir(parents=True)
    if ref.extract:  # a GluonNLP zip: the member is what is hashed
        with zipfile.ZipFile(mirror / ref.filename, "w") as archive:
            archive.writestr(ref.extract, b"not the published file")
    else:
        (mirror / ref.filename).write_bytes(b"not the published file")
    with serve(mirror) as server:
        ran = subprocess.run(["bash", "-c", command], env=dict(env, GLUON_HUB_MIRRORS=server.url),
                             capture_output=True, text=True, timeout=300)
    assert ran.returncode == 1  # the bytes are wrong, on purpose
    assert f"{server.url.rstrip('/')}/{ref.filename}" in ran.stderr, ran.stderr
    assert f"expected {ref.archive_hash or ref.hash}" in ran.stderr, ran.stderr  # the zip is checked first where its hash is known
