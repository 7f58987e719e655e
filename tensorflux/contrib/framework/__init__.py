"""`tf.contrib.framework`: arg_scope, model variables, restoring helpers and small utilities."""

from tensorflux.framework import nest
from tensorflux.contrib.framework.arg_scope import *  # noqa: F403
from tensorflux.contrib.framework.tensor_checks import *  # noqa: F403
from tensorflux.contrib.framework.variables import *  # noqa: F403
from tensorflux.contrib import missing as _missing
from tensorflux.ops.array.sorting import argsort, sort
from tensorflux.ops.state.conv_initializers import (convolutional_delta_orthogonal,
                                                    convolutional_orthogonal_1d,
                                                    convolutional_orthogonal_2d,
                                                    convolutional_orthogonal_3d)
from tensorflux.ops.state.variable_scope import VariableScope
from tensorflux.train.checkpoint_utils import (init_from_checkpoint, list_variables,
                                               load_checkpoint, load_variable)
from tensorflux.train.training_util import (assert_global_step, create_global_step, get_global_step,
                                            get_or_create_global_step)

__getattr__ = _missing.module_getattr("contrib.framework", {
    "*": "the core equivalents in tf.train / tf.nest / tf.compat.v1",
    "get_name_scope": "tf.get_default_graph().get_name_scope()",
    "deprecated": "no replacement needed (decorator)",
    "py_func": "tf.py_func",
    "CriticalSection": "not supported",
})
