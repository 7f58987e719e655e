"""`tf.contrib.tensorboard.plugins`: the embedding projector's config writer."""

from tensorflux.contrib.missing import module_getattr
from tensorflux.contrib.tensorboard.plugins import projector

__all__ = ["projector"]

__getattr__ = module_getattr("contrib.tensorboard.plugins", {
    "*": "tf.summary (TensorBoard reads the event files)",
    "trace": "not supported",
})
