"""`tf.keras.preprocessing.sequence`: padding, skip-gram pairs, the word2vec sampling table
and `TimeseriesGenerator` (keras-preprocessing 1.1 behaviour)."""

from __future__ import annotations

import random

import numpy as np

from tensorflux.keras.utils import Sequence

__all__ = ["pad_sequences", "skipgrams", "make_sampling_table", "TimeseriesGenerator"]


def pad_sequences(
    sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0
):
    """Sequences of varying length as one [count, maxlen] array.

    Sequences longer than `maxlen` lose their start ('pre') or end ('post'); shorter ones get
    `value` before ('pre') or after ('post') them. `maxlen` defaults to the longest length.
    """
    if padding not in ("pre", "post") or truncating not in ("pre", "post"):
        raise ValueError(
            f"padding and truncating must be 'pre' or 'post', got {padding!r} and {truncating!r}."
        )
    rows = [np.asarray(s) for s in sequences]
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    maxlen = int(lengths.max()) if maxlen is None and rows else int(maxlen or 0)
    tail = next((r.shape[1:] for r in rows if len(r)), ())
    out = np.full((len(rows), maxlen, *tail), value, dtype=dtype)
    for i, row in enumerate(rows):
        if not len(row) or not maxlen:
            continue
        row = row[-maxlen:] if truncating == "pre" else row[:maxlen]
        if row.shape[1:] != tail:
            raise ValueError(
                f"Shape of sample {row.shape[1:]} of sequence at position {i} is "
                f"different from expected shape {tail}"
            )
        if padding == "post":
            out[i, : len(row)] = row
        else:
            out[i, maxlen - len(row) :] = row
    return out


def make_sampling_table(size, sampling_factor=1e-5):
    """word2vec's keep probabilities for word ranks 0..size-1, assuming Zipf-distributed
    frequencies: `min(1, sqrt(sampling_factor / freq(rank)))`."""
    gamma = 0.577
    rank = np.arange(size)
    rank[0] = 1
    inv_fq = rank * (np.log(rank) + gamma) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inv_fq
    return np.minimum(1.0, f / np.sqrt(f))


def skipgrams(sequence, vocabulary_size, window_size=4, negative_samples=1.0, shuffle=True,
              categorical=False, sampling_table=None, seed=None):
    """(couples, labels): word pairs within `window_size` of each other (label 1) and
    `negative_samples` times as many random pairs (label 0). Index 0 is skipped; with a
    `sampling_table` a word is kept with probability `sampling_table[word]`. Python's `random`
    draws the samples (seed it for reproducible pairs)."""
    couples, labels = [], []
    for i, wi in enumerate(sequence):
        if not wi:
            continue
        if sampling_table is not None and sampling_table[wi] < random.random():
            continue
        for j in range(max(0, i - window_size), min(len(sequence), i + window_size + 1)):
            if j == i or not sequence[j]:
                continue
            couples.append([wi, sequence[j]])
            labels.append([0, 1] if categorical else 1)
    if negative_samples > 0:
        count = int(len(labels) * negative_samples)
        words = [c[0] for c in couples]
        random.shuffle(words)
        couples += [[words[i % len(words)], random.randint(1, vocabulary_size - 1)]
                    for i in range(count)]
        labels += [[1, 0] if categorical else 0] * count
    if shuffle:
        if seed is None:
            seed = random.randint(0, 10_000_000)
        random.seed(seed)
        random.shuffle(couples)
        random.seed(seed)
        random.shuffle(labels)
    return couples, labels


class TimeseriesGenerator(Sequence):
    """Batches of windows over a time series: sample `i` of a batch is
    `data[row - length:row:sampling_rate]` with target `targets[row]`.

    Raises:
        ValueError: data and targets of different lengths, or no row left after `length`.
    """

    def __init__(self, data, targets, length, sampling_rate=1, stride=1, start_index=0,
                 end_index=None, shuffle=False, reverse=False, batch_size=128):
        if len(data) != len(targets):
            raise ValueError(f"Data and targets have to be of same length. Data length is "
                             f"{len(data)} while target length is {len(targets)}")
        self.data, self.targets = data, targets
        self.length, self.sampling_rate, self.stride = length, sampling_rate, stride
        self.start_index = start_index + length
        self.end_index = len(data) - 1 if end_index is None else end_index
        self.shuffle, self.reverse, self.batch_size = shuffle, reverse, batch_size
        if self.start_index > self.end_index:
            raise ValueError(f"`start_index+length={self.start_index} > "
                             f"end_index={self.end_index}` is disallowed, as no part of the "
                             f"sequence would be left to be used as current step.")

    def __len__(self):
        span = self.batch_size * self.stride
        return (self.end_index - self.start_index + span) // span

    def __getitem__(self, index):
        if self.shuffle:
            rows = np.random.randint(self.start_index, self.end_index + 1, size=self.batch_size)
        else:
            first = self.start_index + self.batch_size * self.stride * index
            rows = np.arange(first, min(first + self.batch_size * self.stride,
                                        self.end_index + 1), self.stride)
        samples = np.array([self.data[row - self.length:row:self.sampling_rate]
                            for row in rows])
        targets = np.array([self.targets[row] for row in rows])
        if self.reverse:
            return samples[:, ::-1, ...], targets
        return samples, targets

    def get_config(self):
        """The generator's arguments (data and targets as lists)."""
        return {"data": np.asarray(self.data).tolist(),
                "targets": np.asarray(self.targets).tolist(), "length": self.length,
                "sampling_rate": self.sampling_rate, "stride": self.stride,
                "start_index": self.start_index - self.length, "end_index": self.end_index,
                "shuffle": self.shuffle, "reverse": self.reverse, "batch_size": self.batch_size}
