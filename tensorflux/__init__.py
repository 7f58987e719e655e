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
from tensorflux.framework.scopes import *  # noqa: F403
from tensorflux.framework.tensor_util import make_ndarray, make_tensor_proto
from tensorflux.ops import sendrecv_ops as _sendrecv_ops
from tensorflux.ops import transfer_ops as _transfer_ops  # noqa: F401
from tensorflux.ops.array_ops import *  # noqa: F403
from tensorflux.ops.control_flow_ops import *  # noqa: F403
from tensorflux.ops.while_loop import *  # noqa: F403
from tensorflux.ops.tensor_array_ops import *  # noqa: F403
from tensorflux.ops.functional_ops import *  # noqa: F403
from tensorflux.ops.math_ops import *  # noqa: F403
from tensorflux.ops.state_ops import *  # noqa: F403
from tensorflux.ops.variables import *  # noqa: F403
from tensorflux.ops.variable_scope import *  # noqa: F403
from tensorflux.ops.init_ops import *  # noqa: F403
from tensorflux.ops import io_ops as _io_ops  # noqa: F401
from tensorflux import initializers
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
from tensorflux.ops.clip_ops import *  # noqa: F403
from tensorflux.ops import training_ops as _training_ops  # noqa: F401
from tensorflux.ops import fused_ops as _fused_ops  # noqa: F401
from tensorflux import layers, losses, metrics
from tensorflux import summary
from tensorflux import debugging, io, queue
from tensorflux import distributed as _distributed  # noqa: F401 - registers grpc:// targets
from tensorflux.ops.random_seed import *  # noqa: F403
from tensorflux.ops.random_ops import *  # noqa: F403
from tensorflux.ops.logging_ops import *  # noqa: F403
from tensorflux.ops.check_ops import *  # noqa: F403
from tensorflux.ops.string_ops import *  # noqa: F403
from tensorflux.ops.string_text_ops import *  # noqa: F403
from tensorflux.ops.string_codec_ops import *  # noqa: F403
from tensorflux import random, strings
from tensorflux import math
from tensorflux.framework.graph_import import import_graph_def
from tensorflux.protos.graph_pb2 import GraphDef
from tensorflux.protos.node_def_pb2 import NodeDef
from tensorflux.protos.attr_value_pb2 import AttrValue
from tensorflux import graph_util
from tensorflux import client
from tensorflux.ops.sparse_ops import *  # noqa: F403
from tensorflux.ops.sparse_math_ops import *  # noqa: F403
from tensorflux.ops.sparse_reshape_ops import *  # noqa: F403
from tensorflux.ops.sparse_array_ops import *  # noqa: F403
from tensorflux.ops.sparse_segment_ops import *  # noqa: F403
from tensorflux.ops.edit_distance_ops import *  # noqa: F403
from tensorflux.ops.sparse_io_ops import *  # noqa: F403
from tensorflux.ops import sparse_cwise_ops as _sparse_cwise_ops  # noqa: F401
from tensorflux.ops.sparse_matmul_ops import *  # noqa: F403
from tensorflux.ops.data_flow_ops import *  # noqa: F403
from tensorflux.ops.accumulator_ops import *  # noqa: F403
from tensorflux.ops.io_ops_readers import *  # noqa: F403
from tensorflux.ops.parsing_ops import *  # noqa: F403
from tensorflux import python_io, sparse
from tensorflux.ops.partitioned_variables import *  # noqa: F403
from tensorflux import image
from tensorflux.ops.image_ops import *  # noqa: F403
from tensorflux.ops.image_patches_ops import *  # noqa: F403
from tensorflux.ops.compat_api import *  # noqa: F403
from tensorflux import compat
from tensorflux.ops.script_ops import *  # noqa: F403
from tensorflux.ops.sort_ops import *  # noqa: F403
from tensorflux.ops.linalg_ops import *  # noqa: F403
from tensorflux.ops.linalg_impl import *  # noqa: F403
from tensorflux.ops.einsum_ops import *  # noqa: F403
from tensorflux import linalg
from tensorflux.ops.custom_gradient import *  # noqa: F403
from tensorflux.ops.space_batch_ops import *  # noqa: F403
from tensorflux import data
from tensorflux.ops.template import *  # noqa: F403
from tensorflux.ops.extra_math_ops import *  # noqa: F403
from tensorflux.ops.histogram_ops import *  # noqa: F403
from tensorflux.ops.root_extras import *  # noqa: F403
from tensorflux import dtypes
from tensorflux import nest
from tensorflux.ops.scatter_nd_tensor_ops import *  # noqa: F403
from tensorflux.ops.fft_ops import *  # noqa: F403
from tensorflux import signal, spectral
from tensorflux import bitwise
from tensorflux import distributions
from tensorflux.ops.lookup_ops import *  # noqa: F403
from tensorflux import lookup
from tensorflux import sets
from tensorflux import saved_model
from tensorflux.ops.special_ops import *  # noqa: F403
from tensorflux.ops.nn_extras import required_space_to_batch_paddings
from tensorflux import keras
from tensorflux import feature_column
from tensorflux import estimator
from tensorflux import distribute
