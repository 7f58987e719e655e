"""`tf.keras.preprocessing.sequence.pad_sequences`."""

from __future__ import annotations

import numpy as np

__all__ = ["pad_sequences"]


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
