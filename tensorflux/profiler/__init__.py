"""`tf.profiler`: parameters, float operations, time and memory of a graph's ops (TF1's
tfprof), by name scope, input graph, op type or creation site."""

from tensorflux.profiler.model_analyzer import Profiler, advise, profile, write_op_log
from tensorflux.profiler.option_builder import ProfileOptionBuilder
from tensorflux.protos.tfprof_log_pb2 import OpLogProto
from tensorflux.protos.tfprof_output_pb2 import (AdviceProto, GraphNodeProto,
                                                 MultiGraphNodeProto)

__all__ = ["AdviceProto", "GraphNodeProto", "MultiGraphNodeProto", "OpLogProto",
           "ProfileOptionBuilder", "Profiler", "advise", "profile", "write_op_log"]
