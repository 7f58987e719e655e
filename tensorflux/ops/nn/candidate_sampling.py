"""Candidate samplers (Uniform, LogUniform, LearnedUnigram, FixedUnigram, All) and
ComputeAccidentalHits, for sampled losses over large class sets.

Each sampler op draws `num_sampled` class ids from its distribution over `[0, range_max)` and
reports expected counts: for a class with probability p, `p * num_sampled` when sampling with
replacement, and `1 - (1 - p) ** num_tries` (computed as `-expm1(num_tries * log1p(-p))`) when
`unique=True`, where `num_tries` is how many draws it took to collect `num_sampled` distinct
ids. Unique sampling is rejection sampling: ids in order of first appearance in one i.i.d.
stream of draws, drawn in growing batches. The learned unigram sampler starts every class at
weight 1 and adds 1 per true class it sees, after sampling (state lives in the node's kernel,
one per session). Generators are seeded from `seed`/`seed2` like every random op.
"""

from __future__ import annotations

import abc
import os
import threading

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics import jit as jit_mod
from tensorflux.lib.numerics.distinct_jit import DistinctCollector
from tensorflux.ops.random.seed import get_seed
from tensorflux.ops.random.stateful import _generator

__all__: list = []

_COMMON = ["num_true: int >= 1", "num_sampled: int >= 1", "unique: bool"]
_SEEDS = ["seed: int = 0", "seed2: int = 0"]
_OUTPUTS = ["sampled_candidates: int64", "true_expected_count: float32",
            "sampled_expected_count: float32"]


def _invalid(message: str):
    return errors.InvalidArgumentError(None, None, message)


def _sampler_shape(true_classes: TensorShape, num_true: int, num_sampled: int):
    true_classes = true_classes.with_rank(2)
    if true_classes._dim_list[1] is not None and true_classes._dim_list[1] != num_true:
        raise ValueError(f"true_classes must have num_true columns, expected: "
                         f"{true_classes._dim_list[1]} was: {num_true}")
    return [TensorShape([num_sampled]), TensorShape([true_classes._dim_list[0], num_true]),
            TensorShape([num_sampled])]


def _expected_count(p: np.ndarray, num_sampled: int, num_tries: int) -> np.ndarray:
    p = np.asarray(p, np.float32)
    if num_tries == num_sampled:
        return p * np.float32(num_sampled)
    # -expm1(num_tries * log1p(-p)) in float64, each pass in place (the same operations).
    q = p.astype(np.float64)
    np.negative(q, out=q)
    np.log1p(q, out=q)
    q *= num_tries
    np.expm1(q, out=q)
    np.negative(q, out=q)
    return q.astype(np.float32)


def _first_distinct(stream: np.ndarray) -> np.ndarray:
    """Ascending positions of the first occurrence of each distinct value of `stream` (what
    `np.unique(stream, return_index=True)[1]`, sorted, gives, without its wrapper)."""
    order = np.argsort(stream, kind="stable")
    ordered = stream[order]
    first = np.empty(ordered.size, np.bool_)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    positions = order[first]
    positions.sort()
    return positions


def _draw_unique(draw, num_sampled: int):
    """(the first `num_sampled` distinct values of an i.i.d. stream, draws consumed).

    The stream is drawn in chunks of `2 * num_sampled + 16` draws, then twice as many each
    time; with numba one compiled pass per chunk keeps the distinct values
    (`DistinctCollector`), the same ids and count of draws as this NumPy reference."""
    chunk = 2 * num_sampled + 16
    if jit_mod.available():
        collector = DistinctCollector(num_sampled)
        while not collector.feed(draw(chunk)):
            chunk *= 2
        return collector.ids(), collector.tries
    return _draw_unique_reference(draw, num_sampled)


def _draw_unique_reference(draw, num_sampled: int):
    """`_draw_unique` in NumPy (the reference of the compiled path, and its fallback)."""
    chunk = 2 * num_sampled + 16
    stream = draw(chunk)
    while True:
        first = _first_distinct(stream)
        if first.size >= num_sampled:
            first = first[:num_sampled]
            return stream[first], int(first[-1]) + 1
        chunk *= 2
        stream = np.concatenate([stream, draw(chunk)])


class _Sampler(abc.ABC):
    """One node's sampler state: `draw(n)`, `probability(ids)` and `update(true_ids)`."""

    def __init__(self, range_max: int, rng: np.random.Generator):
        self.range = range_max
        self.rng = rng
        self.lock = threading.Lock()  # concurrent steps share the node's sampler

    @abc.abstractmethod
    def draw(self, n: int) -> np.ndarray:
        """`n` i.i.d. ids."""

    @abc.abstractmethod
    def probability(self, ids: np.ndarray) -> np.ndarray:
        """The probability of drawing each of `ids` (float32)."""

    def update(self, true_ids: np.ndarray) -> None:
        del true_ids

    def run(self, true_classes, num_true: int, num_sampled: int, unique: bool):
        true_classes = np.asarray(true_classes)
        if true_classes.ndim != 2:
            raise _invalid(f"true_classes must be a matrix, got shape "
                           f"{list(true_classes.shape)}")
        if true_classes.shape[1] != num_true:
            raise _invalid(f"true_classes must have num_true columns, expected: "
                           f"{true_classes.shape[1]} was: {num_true}")
        if unique and num_sampled > self.range:
            raise _invalid("Sampler's range is too small.")
        with self.lock:
            if unique:
                sampled, tries = _draw_unique(self.draw, num_sampled)
            else:
                sampled, tries = self.draw(num_sampled), num_sampled
            # One elementwise pass over both id lists (the sampled ones first).
            true_ids = true_classes.reshape(-1)
            counts = _expected_count(self.probability(np.concatenate([sampled, true_ids])),
                                     num_sampled, tries)
            sampled_count = counts[:num_sampled]
            true_count = counts[num_sampled:].reshape(true_classes.shape)
            self.update(true_ids)
        return sampled.astype(np.int64, copy=False), true_count, sampled_count


class _Uniform(_Sampler):
    def draw(self, n):
        return self.rng.integers(0, self.range, size=n, dtype=np.int64)

    def probability(self, ids):
        return np.full(np.shape(ids), 1.0 / self.range, np.float32)


class _LogUniform(_Sampler):
    def __init__(self, range_max, rng):
        super().__init__(range_max, rng)
        self.log_range = np.log1p(range_max)

    def draw(self, n):
        values = np.exp(self.rng.random(n) * self.log_range).astype(np.int64)
        values -= 1  # in [0, range]: range only when exp rounds up to range + 1
        if values.size and values.max() >= self.range:
            values %= self.range
        return values

    def probability(self, ids):
        ids = np.asarray(ids, np.float64)
        ratio = ids + 2.0
        ratio /= ids + 1.0
        np.log(ratio, out=ratio)
        ratio /= self.log_range
        return ratio.astype(np.float32)


class _Weighted(_Sampler):
    """Draws ids in proportion to `weights` (inverse CDF over their running sum)."""

    def __init__(self, range_max, rng, weights):
        super().__init__(range_max, rng)
        self.set_weights(weights)

    def set_weights(self, weights: np.ndarray) -> None:
        self.weights = weights
        self.cumulative = np.cumsum(weights, dtype=np.float64)

    def draw(self, n):
        picks = self.rng.random(n) * self.cumulative[-1]
        found = np.searchsorted(self.cumulative, picks, side="right")
        return np.minimum(found, len(self.weights) - 1).astype(np.int64)

    def probability(self, ids):
        ids = np.asarray(ids, np.int64)
        inside = (ids >= 0) & (ids < len(self.weights))
        weight = np.where(inside, self.weights[np.where(inside, ids, 0)], 0)
        return (weight / np.float32(self.cumulative[-1])).astype(np.float32)


class _LearnedUnigram(_Weighted):
    def __init__(self, range_max, rng):
        super().__init__(range_max, rng, np.ones(range_max, np.int64))

    def update(self, true_ids):
        if true_ids.size and (true_ids.min() < 0 or true_ids.max() >= self.range):
            raise _invalid(f"true_classes must be in [0, {self.range}), got "
                           f"[{true_ids.min()}, {true_ids.max()}]")
        np.add.at(self.weights, true_ids, 1)
        self.set_weights(self.weights)


class _All(_Sampler):
    def draw(self, n):
        return np.arange(n, dtype=np.int64)

    def probability(self, ids):
        return np.ones(np.shape(ids), np.float32)

    def run(self, true_classes, num_true, num_sampled, unique):
        sampled, true_count, _ = super().run(true_classes, num_true, num_sampled, False)
        return sampled, np.ones_like(true_count), np.ones(num_sampled, np.float32)


def _kernel(sampler, num_true, num_sampled, unique):
    def sample(true_classes):
        return sampler.run(true_classes, num_true, num_sampled, unique)

    return sample


def _define(name: str, extra_attrs=(), with_range: bool = True):
    attrs = [*_COMMON] + (["range_max: int >= 1"] if with_range else []) + list(extra_attrs)
    op = define_op(name, inputs=["true_classes: int64"], outputs=_OUTPUTS,
                   attrs=attrs + _SEEDS, stateful=True, differentiable=False)

    @op.shape_fn
    def _shape(true_classes, *, num_true, num_sampled):
        return _sampler_shape(true_classes, num_true, num_sampled)

    return op


UniformCandidateSampler = _define("UniformCandidateSampler")
LogUniformCandidateSampler = _define("LogUniformCandidateSampler")
LearnedUnigramCandidateSampler = _define("LearnedUnigramCandidateSampler")
ThreadUnsafeUnigramCandidateSampler = _define("ThreadUnsafeUnigramCandidateSampler")
AllCandidateSampler = _define("AllCandidateSampler", with_range=False)
FixedUnigramCandidateSampler = _define(
    "FixedUnigramCandidateSampler",
    ["vocab_file: string = ''", "distortion: float = 1.0", "num_reserved_ids: int = 0",
     "num_shards: int >= 1 = 1", "shard: int >= 0 = 0", "unigrams: list(float) = []"])


@UniformCandidateSampler.kernel(factory=True)
def _uniform_kernel(num_true, num_sampled, unique, range_max, seed, seed2):
    return _kernel(_Uniform(range_max, _generator(seed, seed2)), num_true, num_sampled, unique)


@LogUniformCandidateSampler.kernel(factory=True)
def _log_uniform_kernel(num_true, num_sampled, unique, range_max, seed, seed2):
    return _kernel(_LogUniform(range_max, _generator(seed, seed2)), num_true, num_sampled,
                   unique)


@LearnedUnigramCandidateSampler.kernel(factory=True)
def _learned_unigram_kernel(num_true, num_sampled, unique, range_max, seed, seed2):
    return _kernel(_LearnedUnigram(range_max, _generator(seed, seed2)), num_true, num_sampled,
                   unique)


@ThreadUnsafeUnigramCandidateSampler.kernel(factory=True)
def _thread_unsafe_unigram_kernel(num_true, num_sampled, unique, range_max, seed, seed2):
    return _kernel(_LearnedUnigram(range_max, _generator(seed, seed2)), num_true, num_sampled,
                   unique)


@AllCandidateSampler.kernel(factory=True)
def _all_kernel(num_true, num_sampled, unique, seed, seed2):
    del seed, seed2
    return _kernel(_All(num_sampled, None), num_true, num_sampled, unique)


def _vocab_weights(vocab_file: str) -> list:
    """The last comma-separated field of each non-empty line of `vocab_file`, as floats."""
    if not os.path.exists(vocab_file):
        raise errors.NotFoundError(None, None, f"{vocab_file}; No such file or directory")
    weights = []
    with open(vocab_file, encoding="utf-8") as handle:
        for line in handle:
            line = line.rstrip("\r\n")
            if not line:
                continue
            try:
                weights.append(float(line.split(",")[-1]))
            except ValueError:
                raise _invalid(f"Wrong vocabulary format at line: {line}") from None
    return weights


def _fixed_weights(counts, distortion, num_reserved_ids, num_shards, shard) -> np.ndarray:
    """The shard's weights: reserved ids (weight 0), then counts ** distortion."""
    reserved = np.arange(num_reserved_ids)
    weights = [np.zeros(int(np.sum(reserved % num_shards == shard)), np.float32)]
    # NOTE: TF numbers the counts from the number of reserved ids kept by this shard, not from
    # num_reserved_ids; ids follow that numbering here too.
    ids = weights[0].size + np.arange(len(counts))
    kept = np.asarray(counts, np.float32)[ids % num_shards == shard]
    weights.append(np.power(kept, np.float32(distortion)).astype(np.float32))
    return np.concatenate(weights)


class _FixedUnigram(_Weighted):
    def __init__(self, range_max, rng, weights):
        if weights.size != range_max:
            raise _invalid(f"range is {range_max} must be equal to weights size  "
                           f"{weights.size}")
        super().__init__(range_max, rng, weights)


@FixedUnigramCandidateSampler.kernel(factory=True)
def _fixed_unigram_kernel(num_true, num_sampled, unique, range_max, vocab_file, distortion,
                          num_reserved_ids, num_shards, shard, unigrams, seed, seed2):
    if bool(vocab_file) == bool(unigrams):
        raise _invalid("Must provide either vocab_file or unigrams but not both.")
    if shard >= num_shards:
        raise _invalid(f"shard must be < num_shards, got shard {shard} and num_shards "
                       f"{num_shards}")
    counts = _vocab_weights(vocab_file) if vocab_file else list(unigrams)
    weights = _fixed_weights(counts, distortion, num_reserved_ids, num_shards, shard)
    sampler = _FixedUnigram(range_max, _generator(seed, seed2), weights)
    return _kernel(sampler, num_true, num_sampled, unique)


# -- ComputeAccidentalHits ------------------------------------------------------------------

ComputeAccidentalHits = define_op(
    "ComputeAccidentalHits", inputs=["true_classes: int64", "sampled_candidates: int64"],
    outputs=["indices: int32", "ids: int64", "weights: float32"],
    attrs=["num_true: int", *_SEEDS], differentiable=False)


@ComputeAccidentalHits.shape_fn
def _accidental_hits_shape(true_classes, sampled_candidates, *, num_true):
    true_classes = true_classes.with_rank(2)
    sampled_candidates.with_rank(1)
    if true_classes._dim_list[1] is not None and true_classes._dim_list[1] != num_true:
        raise ValueError(f"true_classes must have num_true columns, expected: "
                         f"{true_classes._dim_list[1]} was: {num_true}")
    return [TensorShape([None])] * 3


_LOWEST = np.float32(-np.finfo(np.float32).max)


@ComputeAccidentalHits.kernel
def _accidental_hits_kernel(true_classes, sampled_candidates, *, num_true):
    if np.ndim(true_classes) != 2:
        raise _invalid(f"true_classes must be a matrix, got shape "
                       f"{list(np.shape(true_classes))}")
    if np.ndim(sampled_candidates) != 1:
        raise _invalid(f"sampled_candidates must be a vector, got shape "
                       f"{list(np.shape(sampled_candidates))}")
    if true_classes.shape[1] != num_true:
        raise _invalid(f"true_classes must have num_true columns, expected: "
                       f"{true_classes.shape[1]} was: {num_true}")
    hits = (true_classes[:, :, None] == sampled_candidates[None, None, :]).any(axis=1)
    rows, positions = np.nonzero(hits)
    return (rows.astype(np.int32), positions.astype(np.int64),
            np.full(rows.size, _LOWEST, np.float32))


# -- Python wrappers --------------------------------------------------------------------------

def _seeds(seed) -> dict:
    seed1, seed2 = get_seed(seed)
    return {"seed": seed1 or 0, "seed2": seed2 or 0}


def _true(true_classes):
    return convert_to_tensor(true_classes, dtype=dtypes.int64, name="true_classes")


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                              seed=None, name=None):
    """Samples classes uniformly from `[0, range_max)`.

    Args:
        true_classes: `[batch_size, num_true]` int64 target classes.
        num_true: classes per example.
        num_sampled: how many classes to draw.
        unique: draw without replacement.
        range_max: the number of classes.
        seed: op-level seed.
        name: optional name.

    Returns:
        `(sampled_candidates [num_sampled] int64, true_expected_count [batch, num_true],
        sampled_expected_count [num_sampled])`, counts as float32.

    Example:
        >>> sampled, true_count, sampled_count = tf.nn.uniform_candidate_sampler(
        ...     labels, 1, 64, True, 10000)
    """
    return UniformCandidateSampler(_true(true_classes), num_true=num_true,
                                   num_sampled=num_sampled, unique=unique,
                                   range_max=range_max, **_seeds(seed), name=name)


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                  seed=None, name=None):
    """Samples classes with Zipf-like probability `log((k + 2) / (k + 1)) / log(range_max + 1)`.

    Suits class ids sorted by decreasing frequency; arguments and results as
    `uniform_candidate_sampler`.
    """
    return LogUniformCandidateSampler(_true(true_classes), num_true=num_true,
                                      num_sampled=num_sampled, unique=unique,
                                      range_max=range_max, **_seeds(seed), name=name)


def learned_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                      seed=None, name=None):
    """Samples classes by how often they appeared as true classes so far (starting uniform).

    Arguments and results as `uniform_candidate_sampler`.
    """
    return LearnedUnigramCandidateSampler(_true(true_classes), num_true=num_true,
                                          num_sampled=num_sampled, unique=unique,
                                          range_max=range_max, **_seeds(seed), name=name)


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                    vocab_file="", distortion=1.0, num_reserved_ids=0,
                                    num_shards=1, shard=0, unigrams=(), seed=None, name=None):
    """Samples classes in proportion to given counts raised to `distortion`.

    Args:
        true_classes, num_true, num_sampled, unique, range_max, seed, name: as
            `uniform_candidate_sampler`.
        vocab_file: a CSV-like file whose lines' last fields are the counts (or use unigrams).
        distortion: counts are raised to this power (0.75 is word2vec's choice).
        num_reserved_ids: leading ids that are never sampled.
        num_shards: split the ids into this many shards by `id % num_shards` ...
        shard: ... and sample only this shard (its ids renumbered from 0).
        unigrams: the counts, when there is no `vocab_file`.

    Returns:
        As `uniform_candidate_sampler`.
    """
    return FixedUnigramCandidateSampler(
        _true(true_classes), num_true=num_true, num_sampled=num_sampled, unique=unique,
        range_max=range_max, vocab_file=vocab_file, distortion=distortion,
        num_reserved_ids=num_reserved_ids, num_shards=num_shards, shard=shard,
        unigrams=list(unigrams), **_seeds(seed), name=name)


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """"Samples" every class `0 .. num_sampled - 1`, each with expected count 1 (for testing)."""
    return AllCandidateSampler(_true(true_classes), num_true=num_true, num_sampled=num_sampled,
                               unique=unique, **_seeds(seed), name=name)


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """Where sampled classes coincide with an example's true classes.

    Returns:
        `(indices int32, ids int64, weights float32)`: for every hit, the example row, the
        position in `sampled_candidates`, and -FLT_MAX (to add to that sampled logit).
    """
    with scope(name, "compute_accidental_hits") as scope_name:
        sampled = convert_to_tensor(sampled_candidates, dtype=dtypes.int64,
                                    name="sampled_candidates")
        return ComputeAccidentalHits(_true(true_classes), sampled, num_true=num_true,
                                     **_seeds(seed), name=scope_name)
