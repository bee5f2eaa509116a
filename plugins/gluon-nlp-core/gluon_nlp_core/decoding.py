"""Beam search and random sampling over a one-step decoder, as GluonNLP 0.10 defines them.

A *decoder* is any callable ``decoder(step_input, states) -> (outputs, new_states)``:
``step_input`` holds one token id per row ``(N,)``, ``outputs`` the next-token scores
``(N, vocab_size)`` and ``states`` a nested list / tuple / dict of NDArrays (or ``None``)
whose batch axis is 0, or the axis ``"N"`` of the ``"__layout__"`` that
``decoder.state_info(batch_size)`` gives for that leaf. Both samplers run
``batch_size * beam_size`` rows at once; every step is a handful of NDArray operations,
with no Python loop over beams or vocabulary.

:class:`BeamSearchSampler` with :class:`BeamSearchScorer` and :class:`SequenceSampler`
return what GluonNLP 0.10's classes of the same names return on the same decoder: the same
samples, scores and valid lengths (``tests/test_decoding.py`` runs both), and for sampling
the same draws under the same ``mx.random.seed``. One deliberate difference: GluonNLP
0.10's ``top_k`` compares the *argsort indices* with ``k`` instead of the ranks, so it
keeps the k best tokens only when a row's scores are already sorted best first; here
``top_k`` always keeps the k best tokens of each row.

Examples
--------
A bigram table as the decoder; from token 2 the two-step ending ``1, 0`` beats ending at
once, since 1 is almost always followed by the end token 0:

>>> from gluon_hub.compat import mx
>>> table = mx.nd.log_softmax(mx.nd.array([[0.0, 2.0, 1.0], [3.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))
>>> step = lambda tokens, states: (table[tokens], states)
>>> sampler = BeamSearchSampler(beam_size=2, decoder=step, eos_id=0, max_length=5)
>>> samples, scores, lengths = sampler(mx.nd.array([2]), [])
>>> samples[0, 0].asnumpy().tolist()[:int(lengths[0, 0].asscalar())]
[2, 1, 0]
"""

from __future__ import annotations

from typing import Any, Callable, Tuple

from gluon_hub.compat import mx

__all__ = [
    "BeamSearchScorer",
    "BeamSearchSampler",
    "SequenceSampler",
    "LanguageModelDecoder",
]

#: The score of a candidate that must never be chosen (GluonNLP's LARGE_NEGATIVE_FLOAT).
_NEVER = -1e18
#: What sampling sets the scores outside the top k to (GluonNLP's value, kept so that the
#: log-probabilities added to the sample scores agree).
_OUTSIDE_TOP_K = -99999.0

NDArray = Any
Decoder = Callable[[NDArray, Any], Tuple[NDArray, Any]]


class BeamSearchScorer:
    """GNMT's length-normalised score: ``(log_prob + previous) / lp(step)`` where
    ``lp(t) = ((K + t) / (K + 1)) ** alpha``.

    ``previous`` is stored divided by ``lp(step - 1)``, so it is multiplied back first.
    ``from_logits=True`` (GluonNLP's name) means the decoder already returns
    log-probabilities; ``False`` applies ``log_softmax`` to its raw scores.
    """

    def __init__(self, alpha: float = 1.0, K: float = 5.0, from_logits: bool = True) -> None:
        self.alpha = float(alpha)
        self.K = float(K)
        self.from_logits = from_logits

    def _penalty(self, step: int, ctx: Any) -> NDArray:
        # Float32 arithmetic in GluonNLP's order, so the scores agree to the last bit.
        base = mx.nd.array([step], ctx=ctx)
        return (self.K + base) ** self.alpha / (self.K + 1) ** self.alpha

    def __call__(self, outputs: NDArray, scores: NDArray, step: int) -> NDArray:
        """Candidate scores ``(..., V)`` from step ``outputs`` ``(..., V)`` and the beams'
        ``scores`` ``(...)``; ``step`` counts from 1."""
        if not self.from_logits:
            outputs = mx.nd.log_softmax(outputs, axis=-1)
        if step > 1:
            scores = mx.nd.broadcast_mul(scores, self._penalty(step - 1, scores.context))
        summed = mx.nd.broadcast_add(outputs, scores.expand_dims(axis=-1))
        return mx.nd.broadcast_div(summed, self._penalty(step, outputs.context))


def _batch_axis(info: Any) -> int:
    return info["__layout__"].find("N") if info else 0


def _map_states(fn: Callable[[NDArray, int], NDArray], states: Any, info: Any) -> Any:
    """Apply ``fn(array, batch_axis)`` to every NDArray of a nested state structure."""
    if states is None:
        return None
    if isinstance(states, mx.nd.NDArray):
        return fn(states, _batch_axis(info))
    if isinstance(states, (list, tuple)):
        infos = info if isinstance(info, (list, tuple)) else [None] * len(states)
        mapped = [_map_states(fn, s, i) for s, i in zip(states, infos)]
        return type(states)(mapped)
    if isinstance(states, dict):
        infos = info if isinstance(info, dict) and "__layout__" not in info else {}
        return {k: _map_states(fn, v, infos.get(k)) for k, v in states.items()}
    raise TypeError(f"decoder states must be NDArrays in nested lists, tuples or dicts, "
                    f"got {type(states).__name__}")


def _tile(states: Any, info: Any, batch_size: int, beam_size: int) -> Any:
    """Repeat every row ``beam_size`` times (row b becomes rows b*beam .. b*beam+beam-1)."""

    def tile(array: NDArray, axis: int) -> NDArray:
        if array.shape[axis] != batch_size:
            raise ValueError(f"every decoder state needs the batch size {batch_size} on its "
                             f"batch axis {axis}; got shape {array.shape}")
        return mx.nd.repeat(array, repeats=beam_size, axis=axis)

    return _map_states(tile, states, info)


def _reorder(states: Any, info: Any, rows: NDArray) -> Any:
    return _map_states(lambda a, axis: mx.nd.take(a, rows, axis=axis), states, info)


def _state_info(decoder: Any, batch_size: int) -> Any:
    state_info = getattr(decoder, "state_info", None)
    return state_info(batch_size) if state_info is not None else None


def _check(beam_size: int, eos_id: int, max_length: int) -> None:
    if beam_size < 1:
        raise ValueError(f"beam_size must be at least 1, got {beam_size}")
    if eos_id < 0:
        raise ValueError(f"eos_id must be a token id (>= 0), got {eos_id}")
    if max_length < 1:
        raise ValueError(f"max_length must be at least 1, got {max_length}")


def _finish(samples: NDArray, valid_length: NDArray, alive: NDArray,
            eos_id: int) -> tuple[NDArray, NDArray]:
    """After ``max_length`` steps: end the beams still alive with EOS, pad the others."""
    last = mx.nd.where(alive, mx.nd.full(alive.shape, eos_id, ctx=alive.context),
                       mx.nd.full(alive.shape, -1, ctx=alive.context)).astype("int32")
    samples = mx.nd.concat(samples, last.expand_dims(axis=2), dim=2)
    return samples, valid_length + alive


class BeamSearchSampler:
    """Keep the ``beam_size`` best-scoring continuations of every input at each step.

    ``sampler(inputs, states)`` takes the first token of each row ``(batch,)`` and the
    decoder's initial states and returns ``(samples, scores, valid_length)``: int32
    ``(batch, beam, length)`` token ids starting with the input token (-1 after a beam's
    end), float32 ``(batch, beam)`` scores best first, and int32 ``(batch, beam)``
    lengths. A beam ends when it emits ``eos_id``; beams still alive after ``max_length``
    steps get ``eos_id`` appended.
    """

    def __init__(self, beam_size: int, decoder: Decoder, eos_id: int,
                 scorer: Callable[[NDArray, NDArray, int], NDArray] | None = None,
                 max_length: int = 100) -> None:
        _check(beam_size, eos_id, max_length)
        self._beam_size = beam_size
        self._decoder = decoder
        self._eos_id = eos_id
        self._scorer = scorer if scorer is not None else BeamSearchScorer()
        self._max_length = max_length

    def __call__(self, inputs: NDArray, states: Any) -> tuple[NDArray, NDArray, NDArray]:
        batch, beam = inputs.shape[0], self._beam_size
        ctx = inputs.context
        info = _state_info(self._decoder, batch)
        states = _tile(states, info, batch, beam)
        step_input = mx.nd.repeat(inputs, repeats=beam, axis=0).astype("int32")
        samples = step_input.reshape((batch, beam, 1))
        valid_length = mx.nd.ones((batch, beam), ctx=ctx, dtype="int32")
        alive = mx.nd.ones((batch, beam), ctx=ctx, dtype="int32")
        # Only the first copy of each input starts "alive" in the ranking, else the beam
        # would hold beam_size copies of the same hypothesis.
        scores = mx.nd.zeros((batch, beam), ctx=ctx)
        if beam > 1:
            scores[:, 1:] = _NEVER
        # Index of each batch row's first beam, to turn per-row beam ids into flat rows.
        row_base = mx.nd.arange(0, batch * beam, beam, ctx=ctx, dtype="float64").reshape((-1, 1))
        for step in range(1, self._max_length + 1):
            outputs, states = self._decoder(step_input, states)
            vocab = outputs.shape[-1]
            candidates = self._scorer(outputs.reshape((batch, beam, vocab)), scores, step)
            alive_f = alive.astype(candidates.dtype)
            candidates = mx.nd.where(mx.nd.broadcast_like(alive_f.expand_dims(axis=2), candidates),
                                     candidates, mx.nd.full(candidates.shape, _NEVER, ctx=ctx))
            # A finished beam competes with its final score as one more candidate.
            finished = mx.nd.where(alive_f, mx.nd.full(scores.shape, _NEVER, ctx=ctx), scores)
            pool = mx.nd.concat(candidates.reshape((batch, beam * vocab)), finished, dim=1)
            scores, index = mx.nd.topk(pool, axis=1, k=beam, ret_typ="both")
            index = index.astype("float64")  # exact integer arithmetic for any vocabulary
            kept = index >= beam * vocab
            word = index - vocab * mx.nd.floor(index / vocab)
            origin = mx.nd.where(kept, index - beam * vocab, mx.nd.floor(index / vocab))
            rows = mx.nd.broadcast_add(origin, row_base).reshape((-1,))
            chosen = mx.nd.where(kept, -mx.nd.ones_like(word), word).astype("int32")
            samples = mx.nd.concat(mx.nd.take(samples.reshape((batch * beam, -1)), rows),
                                   chosen.reshape((-1, 1)), dim=1).reshape((batch, beam, -1))
            valid_length = (mx.nd.take(valid_length.reshape((-1,)), rows).reshape((batch, beam))
                            + 1 - kept.astype("int32"))
            states = _reorder(states, info, rows)
            alive = (mx.nd.take(alive.reshape((-1,)), rows).reshape((batch, beam))
                     * (chosen != self._eos_id))
            step_input = mx.nd.relu(chosen).reshape((-1,))
            if not alive.sum().asscalar():
                return samples, scores, valid_length
        samples, valid_length = _finish(samples, valid_length, alive, self._eos_id)
        return samples, scores, valid_length


class SequenceSampler:
    """Draw ``beam_size`` independent samples per input from the decoder's softmax.

    Raw decoder scores are divided by ``temperature`` before the softmax; with ``top_k``
    only the k best tokens of each step can be drawn. The returned scores are the sums of
    the drawn tokens' log-probabilities (top-k masked, before the temperature), the
    samples, scores and lengths laid out as :class:`BeamSearchSampler`'s (not sorted).
    Draws come from MXNet's generator: seed it with ``mx.random.seed``.
    """

    def __init__(self, beam_size: int, decoder: Decoder, eos_id: int, max_length: int = 100,
                 temperature: float = 1.0, top_k: int | None = None) -> None:
        _check(beam_size, eos_id, max_length)
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        if top_k is not None and top_k < 1:
            raise ValueError(f"top_k must be at least 1 (or None for all tokens), got {top_k}")
        self._beam_size = beam_size
        self._decoder = decoder
        self._eos_id = eos_id
        self._max_length = max_length
        self._temperature = temperature
        self._top_k = top_k

    def __call__(self, inputs: NDArray, states: Any) -> tuple[NDArray, NDArray, NDArray]:
        batch, beam = inputs.shape[0], self._beam_size
        ctx = inputs.context
        info = _state_info(self._decoder, batch)
        states = _tile(states, info, batch, beam)
        step_input = mx.nd.repeat(inputs, repeats=beam, axis=0)
        samples = step_input.reshape((batch, beam, 1)).astype("int32")
        valid_length = mx.nd.ones((batch, beam), ctx=ctx, dtype="int32")
        alive = mx.nd.ones((batch, beam), ctx=ctx, dtype="int32")
        scores = mx.nd.zeros((batch, beam), ctx=ctx)
        for _ in range(self._max_length):
            outputs, states = self._decoder(step_input, states)
            logits = outputs.reshape((batch, beam, -1))
            if self._top_k is not None and self._top_k < logits.shape[-1]:
                best = mx.nd.topk(logits, axis=2, k=self._top_k, ret_typ="mask")
                logits = mx.nd.where(best, logits, mx.nd.full(logits.shape, _OUTSIDE_TOP_K,
                                                              ctx=ctx))
            probs = mx.nd.softmax(logits / self._temperature, axis=2)
            chosen = mx.nd.sample_multinomial(probs, dtype="int32")
            chosen = mx.nd.where(alive, chosen, -mx.nd.ones_like(alive))
            log_prob = mx.nd.pick(mx.nd.log_softmax(logits, axis=2), mx.nd.relu(chosen), axis=2)
            scores = scores + mx.nd.where(alive, log_prob, mx.nd.zeros_like(log_prob))
            valid_length = valid_length + alive
            samples = mx.nd.concat(samples, chosen.expand_dims(axis=2), dim=2)
            alive = alive * (chosen != self._eos_id)
            step_input = mx.nd.relu(chosen).reshape((-1,))
            if not alive.sum().asscalar():
                return samples, scores, valid_length
        samples, valid_length = _finish(samples, valid_length, alive, self._eos_id)
        return samples, scores, valid_length


class LanguageModelDecoder:
    """A one-step decoder over a recurrent language model of this plugin
    (``standard_lstm_lm_*``, ``awd_lstm_lm_*``): raw next-token scores and the new states.

    Use ``BeamSearchScorer(from_logits=False)`` with it for beam search, since the scores
    are not log-probabilities; start from ``net.begin_state(batch_size=...)``.
    """

    def __init__(self, net: Any) -> None:
        self._net = net

    def __call__(self, step_input: NDArray, states: Any) -> tuple[NDArray, Any]:
        outputs, states = self._net(step_input.expand_dims(axis=0), states)
        return outputs[0], states

    def state_info(self, batch_size: int = 0) -> Any:
        """The recurrent states are ``(layers, batch, units)``: batch axis 1."""
        shape = self._net.begin_state(batch_size=1)
        return _map_states(lambda a, axis: {"__layout__": "LNC"}, shape, None)
