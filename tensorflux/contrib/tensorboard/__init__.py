"""`tf.contrib.tensorboard`: only `plugins.projector` is provided."""

from tensorflux.contrib.missing import module_getattr
from tensorflux.contrib.tensorboard import plugins

__all__ = ["plugins"]

__getattr__ = module_getattr("contrib.tensorboard", {"*": "tf.summary"})
