"""TF's internal path `tf.contrib.learn.python` (2017 programs imported
`tensorflow.contrib.learn.python.learn...`): aliases of `tensorflux.contrib.learn`."""

from tensorflux.contrib.learn.python import learn

__all__ = ["learn"]
