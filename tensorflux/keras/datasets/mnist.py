"""`tf.keras.datasets.mnist`: the MNIST digits as uint8 arrays."""

from __future__ import annotations

import numpy as np

from tensorflux.keras.file_cache import get_file

__all__ = ["load_data"]

_ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"
_MD5 = "8a61469f7ea1b51cbae51d4f78837e45"


def load_data(path="mnist.npz"):
    """MNIST as `(x_train, y_train), (x_test, y_test)`.

    Args:
      path: file name in the cache (~/.keras/datasets/), fetched on first use.

    Returns:
      uint8 images [60000, 28, 28] / [10000, 28, 28] and uint8 labels 0..9.
    """
    path = get_file(path, origin=_ORIGIN, file_hash=_MD5)
    with np.load(path, allow_pickle=False) as f:
        x_train, y_train = f["x_train"], f["y_train"]
        x_test, y_test = f["x_test"], f["y_test"]
    return (x_train, y_train), (x_test, y_test)
