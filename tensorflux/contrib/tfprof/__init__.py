"""`tf.contrib.tfprof` (TF 1.x): the profiler's first API, `model_analyzer.
print_model_analysis` with its option dicts and `tfprof_logger.write_op_log`, served by
`tf.profiler`."""

from tensorflux.contrib.tfprof import model_analyzer, tfprof_logger

__all__ = ["model_analyzer", "tfprof_logger"]
