"""`tf.keras.datasets.boston_housing`: the Boston house-price regression data."""

from __future__ import annotations

import numpy as np

from tensorflux.keras.file_cache import get_file

__all__ = ["load_data"]

_ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/boston_housing.npz"
_SHA256 = "f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5"


def load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    """Boston housing as `(x_train, y_train), (x_test, y_test)`.

    The rows are shuffled with `np.random.seed(seed)` (as Keras does, which reseeds NumPy's
    global generator) and the last `test_split` of them are the test set.

    Args:
      path: file name in the cache (~/.keras/datasets/), fetched on first use.
      test_split: fraction of rows kept for the test set, in [0, 1).
      seed: seed of the shuffle.

    Returns:
      float64 features [N, 13] and float64 prices [N].

    Raises:
      ValueError: if `test_split` is outside [0, 1).
    """
    if not 0 <= test_split < 1:
        raise ValueError(f"boston_housing.load_data: test_split must lie in [0, 1), "
                         f"got {test_split}.")
    path = get_file(path, origin=_ORIGIN, file_hash=_SHA256)
    with np.load(path, allow_pickle=False) as f:
        x, y = f["x"], f["y"]
    np.random.seed(seed)
    indices = np.arange(len(x))
    np.random.shuffle(indices)
    x, y = x[indices], y[indices]
    cut = int(len(x) * (1 - test_split))
    return (np.array(x[:cut]), np.array(y[:cut])), (np.array(x[cut:]), np.array(y[cut:]))
