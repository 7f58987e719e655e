"""`tf.contrib.tensorboard`: only `plugins.projector` is provided."""

from tensorflux.contrib import missing as _missing
from tensorflux.contrib.tensorboard import plugins

__all__ = ["plugins"]

__getattr__ = _missing.module_getattr("contrib.tensorboard", {"*": "tf.summary"})
