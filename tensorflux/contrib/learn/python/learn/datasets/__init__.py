"""`tensorflow.contrib.learn.python.learn.datasets` (alias of `tf.contrib.learn.datasets`)."""

from tensorflux.contrib.learn.datasets import base, load_dataset, mnist

__all__ = ["base", "load_dataset", "mnist"]
