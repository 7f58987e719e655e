"""`tf.keras.utils`: `to_categorical`, `normalize`, `get_file`, `Sequence`."""

from __future__ import annotations

import numpy as np

from tensorflux.keras.file_cache import get_file

__all__ = ["to_categorical", "normalize", "get_file", "Sequence"]


def to_categorical(y, num_classes=None, dtype="float32"):
    """One-hot rows for the integer class vector `y` (a trailing 1 dimension is dropped)."""
    y = np.asarray(y, dtype="int64")
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    y = y.ravel()
    if num_classes is None:
        num_classes = int(y.max()) + 1 if y.size else 0
    if y.size and (y.min() < 0 or y.max() >= num_classes):
        raise ValueError(f"to_categorical: class ids must lie in [0, {num_classes}).")
    out = np.zeros((y.size, num_classes), dtype=dtype)
    out[np.arange(y.size), y] = 1
    return out.reshape(shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    """`x` divided by its `order`-norm along `axis` (zero norms left as 1)."""
    x = np.asarray(x)
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)


class Sequence:
    """A dataset of batches: subclasses define `__getitem__(index)` and `__len__()`.

    `fit` and `fit_generator` walk the batches in order each epoch, then call `on_epoch_end`.
    """

    def __getitem__(self, index):
        raise IndexError(f"{type(self).__name__} defines no batches: implement __getitem__.")

    def __len__(self):
        return 0

    def on_epoch_end(self):
        pass

    def __iter__(self):
        for index in range(len(self)):
            yield self[index]
