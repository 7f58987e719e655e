"""`tf.keras.datasets`: the Keras sample data sets, fetched once into ~/.keras/datasets.

Provided: `mnist`, `fashion_mnist`, `boston_housing` (NumPy .npz / gzip IDX files). The
data sets Keras stores as Python pickles (cifar10, cifar100, imdb, reuters) are not provided:
tensorflux never unpickles a file it reads.
"""

from tensorflux.keras.datasets import boston_housing, fashion_mnist, mnist

__all__ = ["boston_housing", "fashion_mnist", "mnist"]

_PICKLED = ("cifar10", "cifar100", "imdb", "reuters")


def __getattr__(name):  # noqa: N807 - module hook
    if name in _PICKLED:
        raise AttributeError(
            f"tf.keras.datasets.{name} is not provided by tensorflux: Keras stores it as a "
            f"Python pickle, and tensorflux never unpickles a file it reads.")
    raise AttributeError(f"module 'tensorflux.keras.datasets' has no attribute '{name}'")
