"""`tf.estimator.experimental` (the parts tensorflux provides): early stopping hooks and the
in-memory evaluator hook, the raw supervised input receiver fn."""

from tensorflux.estimator.early_stopping import (
    make_early_stopping_hook,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
from tensorflux.estimator.in_memory_evaluation import InMemoryEvaluatorHook
from tensorflux.estimator.supervised_receiver import build_raw_supervised_input_receiver_fn

__all__ = ["build_raw_supervised_input_receiver_fn", "InMemoryEvaluatorHook",
           "make_early_stopping_hook", "stop_if_higher_hook",
           "stop_if_lower_hook", "stop_if_no_decrease_hook", "stop_if_no_increase_hook"]
