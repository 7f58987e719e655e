"""`tf.keras.datasets.fashion_mnist`: Zalando's Fashion-MNIST as uint8 arrays."""

from __future__ import annotations

import gzip
import os

import numpy as np

from tensorflux.keras.file_cache import get_file

__all__ = ["load_data"]

_BASE = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
_FILES = ("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz",
          "t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz")


def _read_idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


def load_data():
    """Fashion-MNIST as `(x_train, y_train), (x_test, y_test)`.

    The four gzip IDX files are cached in ~/.keras/datasets/fashion-mnist/.

    Returns:
      uint8 images [N, 28, 28] and uint8 labels 0..9.
    """
    subdir = os.path.join("datasets", "fashion-mnist")
    paths = [get_file(name, origin=_BASE + name, cache_subdir=subdir) for name in _FILES]
    y_train = _read_idx(paths[0], 8)
    x_train = _read_idx(paths[1], 16).reshape(len(y_train), 28, 28)
    y_test = _read_idx(paths[2], 8)
    x_test = _read_idx(paths[3], 16).reshape(len(y_test), 28, 28)
    return (x_train, y_train), (x_test, y_test)
