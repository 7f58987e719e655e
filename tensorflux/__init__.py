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
from tensorflux.ops.internal import sendrecv as _sendrecv_ops
from tensorflux.ops.internal import transfer as _transfer_ops  # noqa: F401
from tensorflux.ops.array import *  # noqa: F403
from tensorflux.ops.control_flow.primitives import *  # noqa: F403
from tensorflux.ops.control_flow.while_loop import *  # noqa: F403
from tensorflux.ops.data_flow.tensor_array_class import *  # noqa: F403
from tensorflux.ops.control_flow.functional import *  # noqa: F403
from tensorflux.ops.math import *  # noqa: F403
from tensorflux.ops.state.variable_ops import *  # noqa: F403
from tensorflux.ops.state.variables import *  # noqa: F403
from tensorflux.ops.state.variable_scope import *  # noqa: F403
from tensorflux.ops.state.initializers import *  # noqa: F403
from tensorflux.ops.io import checkpoint as _io_ops  # noqa: F401
from tensorflux import initializers
from tensorflux.protos.config_pb2 import (ConfigProto, GPUOptions, GraphOptions, OptimizerOptions,
                                          RunMetadata, RunOptions)
from tensorflux.runtime.session import InteractiveSession, Session
from tensorflux.platform import app, gfile
from tensorflux.platform import flags
from tensorflux.platform import tf_logging as logging
from tensorflux.platform.version import GIT_VERSION, VERSION, __version__
from tensorflux.platform.version import (COMPILER_VERSION, CXX11_ABI_FLAG, GRAPH_DEF_VERSION,
                                         GRAPH_DEF_VERSION_MIN_CONSUMER,
                                         GRAPH_DEF_VERSION_MIN_PRODUCER, MONOLITHIC_BUILD)
from tensorflux.framework.graph_io import attr_to_proto as _attr_to_proto  # noqa: F401

bool = bool_  # noqa: A001,F405
from tensorflux import nn, train
from tensorflux import test
from tensorflux.framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from tensorflux.ops.autodiff.gradients import *  # noqa: F403
from tensorflux.ops.math.clip import *  # noqa: F403
from tensorflux.ops.state import training_ops as _training_ops  # noqa: F401
from tensorflux.ops.state.resource_variables import ResourceVariable  # noqa: F401
from tensorflux.ops.internal import fused as _fused_ops  # noqa: F401
from tensorflux.ops import flops_registry as _flops_registry  # noqa: F401
from tensorflux import layers, losses
from tensorflux import metrics
from tensorflux import summary
from tensorflux import debugging, io, queue
from tensorflux import profiler
from tensorflux import distributed as _distributed  # noqa: F401 - registers grpc:// targets
from tensorflux.ops.random.seed import *  # noqa: F403
from tensorflux.ops.random.stateful import *  # noqa: F403
from tensorflux.ops.debug.logging import *  # noqa: F403
from tensorflux.ops.debug.checks import *  # noqa: F403
from tensorflux.ops.strings.conversion import *  # noqa: F403
from tensorflux.ops.strings.text import *  # noqa: F403
from tensorflux.ops.strings.hashing import *  # noqa: F403
from tensorflux import random, strings
from tensorflux import math
from tensorflux.framework.graph_import import import_graph_def
from tensorflux.protos.graph_pb2 import GraphDef
from tensorflux.protos.node_def_pb2 import NodeDef
from tensorflux.protos.attr_value_pb2 import AttrValue
from tensorflux import graph_util
from tensorflux import client
from tensorflux.ops.sparse.core import *  # noqa: F403
from tensorflux.ops.sparse.arithmetic import *  # noqa: F403
from tensorflux.ops.sparse.structure import *  # noqa: F403
from tensorflux.ops.sparse.composites import *  # noqa: F403
from tensorflux.ops.sparse.segment import *  # noqa: F403
from tensorflux.ops.sparse.edit_distance import *  # noqa: F403
from tensorflux.ops.sparse.serialization import *  # noqa: F403
from tensorflux.ops.sparse import cwise as _sparse_cwise_ops  # noqa: F401
from tensorflux.ops.sparse.matmul import *  # noqa: F403
from tensorflux.ops.data_flow.queues import *  # noqa: F403
from tensorflux.ops.data_flow.accumulators import *  # noqa: F403
from tensorflux.ops.io.readers import *  # noqa: F403
from tensorflux.ops.io.parsing import *  # noqa: F403
from tensorflux import python_io, sparse
from tensorflux.ops.state.partitioned import *  # noqa: F403
from tensorflux import image
from tensorflux.ops.image.geometry import *  # noqa: F403
from tensorflux.ops.image.patches import *  # noqa: F403
from tensorflux.framework.behavior import *  # noqa: F403
from tensorflux.framework.tensor_util import get_static_value, is_numeric_tensor, is_tensor
from tensorflux.framework.tensor_shape import dimension_at_index, dimension_value
from tensorflux.platform.tf_logging import get_logger
from tensorflux.ops.debug.checks import assert_near
from tensorflux.ops.math.reduction import arg_max, arg_min
from tensorflux.ops.math.casting import to_complex64, to_complex128
from tensorflux import compat
from tensorflux.ops.script.py_func import *  # noqa: F403
from tensorflux.ops.array.sorting import *  # noqa: F403
from tensorflux.ops.linalg.decompositions import *  # noqa: F403
from tensorflux.ops.linalg.solvers import *  # noqa: F403
from tensorflux.ops.linalg.functions import *  # noqa: F403
from tensorflux.ops.linalg.einsum import *  # noqa: F403
from tensorflux import linalg
from tensorflux.ops.linalg.square_root import matrix_square_root
from tensorflux import config
from tensorflux.ops.autodiff.custom_gradient import *  # noqa: F403
from tensorflux.ops.array.space_batch import *  # noqa: F403
from tensorflux import data
from tensorflux.ops.state.template import *  # noqa: F403
from tensorflux.ops.math.nan_safe import *  # noqa: F403
from tensorflux.ops.math.histogram import *  # noqa: F403
from tensorflux.protos.attr_value_pb2 import NameAttrList
from tensorflux.protos.event_pb2 import Event, LogMessage, SessionLog
from tensorflux.protos.meta_graph_pb2 import MetaGraphDef, TensorInfo
from tensorflux.protos.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorflux.framework.errors import OpError
from tensorflux.framework.indexed_slices import convert_to_tensor_or_indexed_slices
from tensorflux.ops.autodiff.gradients import NoGradient, UnconnectedGradients
from tensorflux.ops.debug.checks import (assert_proper_iterable, assert_rank_in,
                                         assert_same_float_dtype, verify_tensor_all_finite)
from tensorflux.ops.debug.logging import timestamp
from tensorflux.ops.nn.conv import conv2d_backprop_filter_v2, conv2d_backprop_input_v2
from tensorflux import dtypes
from tensorflux.framework import nest
from tensorflux.ops.array.tensor_scatter import *  # noqa: F403
from tensorflux.ops.array.forwarding import guarantee_const  # noqa: E402
from tensorflux.ops.signal.fft import *  # noqa: F403
from tensorflux import signal, spectral
from tensorflux import bitwise
from tensorflux import distributions
from tensorflux.ops.data_flow.lookup import *  # noqa: F403
from tensorflux import lookup
from tensorflux import sets
from tensorflux import saved_model
from tensorflux.ops.math.special import *  # noqa: F403
from tensorflux.ops.nn.conv_composites import required_space_to_batch_paddings
from tensorflux import keras
from tensorflux import feature_column
from tensorflux import estimator
# data sits below train: the hook (it needs the Saver) is defined in estimator, named here.
from tensorflux.estimator.input_pipeline_hook import CheckpointInputPipelineHook as _InputHook
data.experimental.CheckpointInputPipelineHook = _InputHook
del _InputHook
from tensorflux import distribute
from tensorflux import contrib
from tensorflux import tpu
from tensorflux import autograph, lite
from tensorflux.ops.control_flow.polymorphic_function import *  # noqa: F403
from tensorflux.ops.autodiff.tape import *  # noqa: F403
from tensorflux.framework.tensor_spec import *  # noqa: F403
from tensorflux.ops.ragged.ragged_tensor import RaggedTensor
from tensorflux import ragged
from tensorflux import raw_ops
from tensorflux import manip, resource_loader, sysconfig, version
from tensorflux.ops.data_flow.session_ops import *  # noqa: F403
from tensorflux.ops.data_flow.critical_section import CriticalSection
from tensorflux.ops.array.fake_quant import *  # noqa: F403
from tensorflux import quantization
from tensorflux.framework.load_library import *  # noqa: F403
from tensorflux.ops.io.tensor_codec import decode_json_example, parse_tensor, serialize_tensor
from tensorflux import audio
from tensorflux.ops.array.quantize import dequantize, quantize, quantize_v2, quantized_concat
from tensorflux.ops.array.fingerprint import fingerprint
from tensorflux.ops.image.volume_patches import extract_volume_patches
from tensorflux import user_ops
