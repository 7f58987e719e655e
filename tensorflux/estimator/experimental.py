"""`tf.estimator.experimental` (the parts tensorflux provides): early stopping hooks and the
in-memory evaluator hook."""

from tensorflux.estimator.early_stopping import (
    make_early_stopping_hook,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
from tensorflux.estimator.in_memory_evaluation import InMemoryEvaluatorHook

__all__ = ["InMemoryEvaluatorHook", "make_early_stopping_hook", "stop_if_higher_hook",
           "stop_if_lower_hook", "stop_if_no_decrease_hook", "stop_if_no_increase_hook"]
