"""`tf.contrib.learn.datasets`: `mnist.read_data_sets` and `base` over local files only."""

from tensorflux.contrib.learn.datasets import base, mnist
from tensorflux.contrib.missing import module_getattr

__all__ = ["base", "mnist"]

__getattr__ = module_getattr("contrib.learn.datasets", {
    "*": "tf.keras.datasets style loading of local files (no downloads in tensorflux)",
    "load_dataset": "tf.contrib.learn.datasets.mnist.read_data_sets for MNIST; no other "
                    "dataset is bundled",
})
