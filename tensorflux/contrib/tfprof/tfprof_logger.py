"""`tf.contrib.tfprof.tfprof_logger`: write_op_log and the trainable-variables type."""

from tensorflux.profiler.model_analyzer import write_op_log
from tensorflux.profiler.option_builder import TRAINABLE_VARIABLES

__all__ = ["TRAINABLE_VARIABLES", "write_op_log"]
