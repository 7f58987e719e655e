"""`tf.contrib.tensorboard.plugins`: the embedding projector's config writer."""

from tensorflux.contrib import missing as _missing
from tensorflux.contrib.tensorboard.plugins import projector

__all__ = ["projector"]

__getattr__ = _missing.module_getattr("contrib.tensorboard.plugins", {
    "*": "tf.summary (TensorBoard reads the event files)",
    "trace": "not supported",
})
