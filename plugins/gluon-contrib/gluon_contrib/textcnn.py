"""textCNN (Kim, 2014): one convolution layer over word vectors, max-over-time pooling.

The four variants of the paper differ only in their word vectors:

=================  ==========================================================
``rand``           vectors randomly initialised and trained
``static``         pretrained vectors, kept fixed
``non-static``     pretrained vectors, fine-tuned
``multichannel``   two copies of the pretrained vectors, one fixed, one tuned
=================  ==========================================================

Each filter spans the whole word vector of every channel, so the multichannel filter is
"applied to both channels and the results added", as in the paper. The paper's settings
are the defaults: windows 3, 4, 5 with 100 feature maps each, dropout 0.5.
"""

from __future__ import annotations

from typing import Sequence

from gluon_hub.compat import mx
from gluon_hub.specs import ExportGraph

nn = mx.gluon.nn

__all__ = [
    "MODES",
    "TextCNN",
    "textcnn_rand",
    "textcnn_static",
    "textcnn_nonstatic",
    "textcnn_multichannel",
    "export_graphs",
]

MODES = ("rand", "static", "non-static", "multichannel")


class TextCNN(nn.HybridBlock):
    """Sentence classifier over token ids of shape ``(batch, length)``; returns logits.

    Sentences must be at least as long as the widest window (pad them).
    ``set_embedding`` loads pretrained vectors into every embedding channel.
    """

    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        embed_size: int = 300,
        mode: str = "rand",
        windows: Sequence[int] = (3, 4, 5),
        num_filters: int = 100,
        dropout: float = 0.5,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        if mode not in MODES:
            raise ValueError(f"unknown textCNN mode {mode!r}; choose one of {', '.join(MODES)}")
        for name, value in (("vocab_size", vocab_size), ("num_classes", num_classes),
                            ("embed_size", embed_size), ("num_filters", num_filters)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if not windows or any(w < 1 for w in windows):
            raise ValueError(f"windows must be positive widths, got {windows!r}")
        self.mode = mode
        self.windows = tuple(windows)
        channels = 2 if mode == "multichannel" else 1
        with self.name_scope():
            self.embedding = nn.Embedding(vocab_size, embed_size)
            if mode == "static":
                self.embedding.collect_params().setattr("grad_req", "null")
            self.static_embedding = None
            if mode == "multichannel":
                self.static_embedding = nn.Embedding(vocab_size, embed_size)
                self.static_embedding.collect_params().setattr("grad_req", "null")
            self.convs = nn.HybridSequential(prefix="")
            for width in self.windows:
                self.convs.add(nn.Conv1D(num_filters, width, activation="relu",
                                         in_channels=embed_size * channels))
            self.dropout = nn.Dropout(dropout)
            self.output = nn.Dense(num_classes, in_units=num_filters * len(self.windows))

    def set_embedding(self, vectors) -> None:
        """Copy pretrained vectors (an NDArray or array of ``(vocab_size, embed_size)``)
        into the word-vector channels."""
        vectors = mx.nd.array(vectors) if not isinstance(vectors, mx.nd.NDArray) else vectors
        for block in (self.embedding, self.static_embedding):
            if block is None:
                continue
            expected = block.weight.shape
            if tuple(vectors.shape) != tuple(expected):
                raise ValueError(
                    f"pretrained vectors have shape {tuple(vectors.shape)}, the embedding "
                    f"needs {tuple(expected)} (vocabulary size, vector size)"
                )
            block.weight.set_data(vectors)

    def hybrid_forward(self, F, tokens):
        embedded = self.embedding(tokens)
        if self.static_embedding is not None:
            embedded = F.concat(embedded, self.static_embedding(tokens), dim=2)
        # (batch, length, channels*embed) -> (batch, channels*embed, length) for Conv1D
        embedded = F.transpose(embedded, axes=(0, 2, 1))
        pooled = [F.max(conv(embedded), axis=2) for conv in self.convs]
        features = F.concat(*pooled, dim=1) if len(pooled) > 1 else pooled[0]
        return self.output(self.dropout(features))


def export_graphs(model: TextCNN, input_shape: Sequence[int] | None = None) -> list[ExportGraph]:
    """The graph ``gluon_hub.export`` writes: the model itself, token ids ``(batch,
    length)`` with batch and length free (at least the widest window)."""
    batch, length = tuple(input_shape or (1, max(model.windows)))
    return [ExportGraph("textcnn", model, ((batch, length),), ("int32",), ((None, None),))]


def _factory(mode: str):
    def build(
        vocab_size: int = 16185,
        num_classes: int = 2,
        embed_size: int = 300,
        windows: Sequence[int] = (3, 4, 5),
        num_filters: int = 100,
        dropout: float = 0.5,
    ) -> TextCNN:
        return TextCNN(vocab_size, num_classes, embed_size=embed_size, mode=mode,
                       windows=windows, num_filters=num_filters, dropout=dropout)

    build.__name__ = f"textcnn_{mode.replace('-', '')}"
    build.__doc__ = f"textCNN-{mode} (Kim, 2014); defaults: SST-2 vocabulary, 300-d vectors."
    return build


textcnn_rand = _factory("rand")
textcnn_static = _factory("static")
textcnn_nonstatic = _factory("non-static")
textcnn_multichannel = _factory("multichannel")
