"""`tf.contrib.learn.datasets`: `mnist.read_data_sets`, `load_dataset("mnist")` and `base` over
local files only."""

from tensorflux.contrib.learn.datasets import base, mnist
from tensorflux.contrib import missing as _missing

__all__ = ["base", "mnist", "load_dataset"]

_NOT_BUNDLED = ("iris", "boston", "dbpedia")


def load_dataset(name, size="small", test_with_fake_data=False):
    """TF 1.x `load_dataset(name)`: "mnist" is `mnist.load_mnist()` (the four MNIST files in
    ./MNIST-data, never downloaded).

    Raises:
        ContribNotProvidedError: "iris", "boston", "dbpedia" (TF ships or downloads them).
        ValueError: an unknown name.
    """
    del size, test_with_fake_data  # only dbpedia used them
    if name == "mnist":
        return mnist.load_mnist()
    if name in _NOT_BUNDLED:
        raise _missing.ContribNotProvidedError(
            "contrib.learn.datasets", f"load_dataset({name!r})",
            "base.load_csv_with_header on a local copy (no dataset is bundled)")
    raise ValueError(f"Name of dataset is not found: {name}")

__getattr__ = _missing.module_getattr("contrib.learn.datasets", {
    "*": "tf.keras.datasets style loading of local files (no downloads in tensorflux)",
})
