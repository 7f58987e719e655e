"""`tf.contrib.layers`: slim-style layers, initializers, regularizers, optimize_loss, summaries,
and the old feature columns (real_valued_column, sparse_column_with_*, ...).

Every layer is `add_arg_scope`-decorated, so `arg_scope` sets its defaults.
"""

from tensorflux.contrib.framework.arg_scope import arg_scope
from tensorflux.contrib.layers.feature_column import *  # noqa: F403
from tensorflux.contrib.layers.initializers import *  # noqa: F403
from tensorflux.contrib.layers.layers import *  # noqa: F403
from tensorflux.contrib.layers.normalization import *  # noqa: F403
from tensorflux.contrib.layers.optimizers import *  # noqa: F403
from tensorflux.contrib.layers.regularizers import *  # noqa: F403
from tensorflux.contrib.layers.stateless_layers import *  # noqa: F403
from tensorflux.contrib.layers.summaries import *  # noqa: F403
from tensorflux.contrib import missing as _missing

__getattr__ = _missing.module_getattr("contrib.layers", {
    "*": "the tf.layers / tf.keras.layers equivalent",
    "conv1d": "tf.layers.conv1d",
    "convolution1d": "tf.layers.conv1d",
    "conv3d": "tf.layers.conv3d",
    "convolution3d": "tf.layers.conv3d",
    "max_pool3d": "tf.layers.max_pooling3d",
    "avg_pool3d": "tf.layers.average_pooling3d",
    "group_norm": "not supported (write it with tf.nn.moments)",
    "recompute_grad": "not supported",
    "rev_block": "not supported",
    "spatial_softmax": "not supported",
    "scale_gradient": "not supported",
})
