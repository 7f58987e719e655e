"""`tf.contrib.learn.datasets`: `mnist.read_data_sets` and `base` over local files only."""

from tensorflux.contrib.learn.datasets import base, mnist
from tensorflux.contrib import missing as _missing

__all__ = ["base", "mnist"]

__getattr__ = _missing.module_getattr("contrib.learn.datasets", {
    "*": "tf.keras.datasets style loading of local files (no downloads in tensorflux)",
    "load_dataset": "tf.contrib.learn.datasets.mnist.read_data_sets for MNIST; no other "
                    "dataset is bundled",
})
