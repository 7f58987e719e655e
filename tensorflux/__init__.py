"""tensorflux: the TensorFlow 1.x dataflow system (OSDI 2016) in Python, with NumPy kernels.

`import tensorflux as tf` gives the `tf.compat.v1` API.
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
from tensorflux.ops import sendrecv_ops as _sendrecv_ops
from tensorflux.ops.array_ops import constant, identity, placeholder, placeholder_with_default
from tensorflux.ops.control_flow_ops import group, no_op, with_dependencies
from tensorflux.ops.control_flow_ops import tuple_ as tuple  # noqa: A001
from tensorflux.ops.math_ops import add, matmul, multiply, subtract
from tensorflux.protos.config_pb2 import (ConfigProto, GPUOptions, GraphOptions,
                                          OptimizerOptions, RunMetadata, RunOptions)
from tensorflux.runtime.session import InteractiveSession, Session
from tensorflux.framework.graph_io import attr_to_proto as _attr_to_proto

bool = bool_  # noqa: A001,F405
