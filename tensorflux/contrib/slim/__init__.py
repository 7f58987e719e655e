"""`tf.contrib.slim`: the TF-Slim namespace (layers, arg_scope, variables, losses, metrics,
learning, evaluation)."""

from tensorflux.contrib import losses
from tensorflux.contrib import metrics
from tensorflux.contrib.framework.arg_scope import *  # noqa: F403
from tensorflux.contrib.framework.variables import *  # noqa: F403
from tensorflux.contrib.layers import utils
from tensorflux.contrib.layers.initializers import *  # noqa: F403
from tensorflux.contrib.layers.layers import *  # noqa: F403
from tensorflux.contrib.layers.normalization import *  # noqa: F403
from tensorflux.contrib.layers.optimizers import optimize_loss
from tensorflux.contrib.layers.regularizers import *  # noqa: F403
from tensorflux.contrib.layers.stateless_layers import *  # noqa: F403
from tensorflux.contrib.layers.summaries import *  # noqa: F403
from tensorflux.contrib import missing as _missing
from tensorflux.contrib.slim import evaluation, learning
from tensorflux.train.training_util import (create_global_step, get_global_step,
                                            get_or_create_global_step)

__getattr__ = _missing.module_getattr("contrib.slim", {
    "*": "the tf.contrib.layers / tf.layers equivalent",
    "nets": "not supported (define the network with slim layers; no model zoo is provided)",
    "dataset": "tf.data",
    "dataset_data_provider": "tf.data",
    "tfexample_decoder": "tf.parse_single_example",
    "queues": "tf.train.start_queue_runners",
    "model_analyzer": "not supported",
    "prefetch_queue": "tf.data prefetch",
})
