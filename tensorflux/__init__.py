"""tensorflux: the TensorFlow 1.x dataflow system (OSDI 2016) in Python, with NumPy kernels.

`import tensorflux as tf` gives the `tf.compat.v1` API. Each ops module lists its public TF
names in `__all__` and is star-imported here; namespaces (`tf.nn`, `tf.train`, ...) are modules
of their own. Keep this file to one import line per module.
"""

from tensorflux.framework import errors
from tensorflux.framework.dtypes import *  # noqa: F403
from tensorflux.framework.dtypes import DType, as_dtype
from tensorflux.framework.graph import (Graph, GraphKeys, add_to_collection, add_to_collections,
                                        get_collection, get_collection_ref, get_default_graph,
                                        get_default_session, reset_default_graph)
from tensorflux.framework.tensor import Operation, Tensor
from tensorflux.framework.tensor_conversion import (convert_to_tensor,
                                                    register_tensor_conversion_function)
from tensorflux.framework.tensor_shape import Dimension, TensorShape
from tensorflux.framework.device_spec import DeviceSpec
from tensorflux.framework.tensor_util import make_ndarray, make_tensor_proto
from tensorflux.ops import sendrecv_ops as _sendrecv_ops
from tensorflux.ops.array_ops import *  # noqa: F403
from tensorflux.ops.control_flow_ops import *  # noqa: F403
from tensorflux.ops.math_ops import *  # noqa: F403
from tensorflux.protos.config_pb2 import (ConfigProto, GPUOptions, GraphOptions,
                                          OptimizerOptions, RunMetadata, RunOptions)
from tensorflux.runtime.session import InteractiveSession, Session
from tensorflux.platform import app, gfile
from tensorflux.platform import flags
from tensorflux.platform import tf_logging as logging
from tensorflux.platform.version import GIT_VERSION, VERSION, __version__
from tensorflux.framework.graph_io import attr_to_proto as _attr_to_proto  # noqa: F401

bool = bool_  # noqa: A001,F405
from tensorflux import nn, train
from tensorflux import test
from tensorflux.framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from tensorflux.ops.gradients_impl import *  # noqa: F403
