"""An Optimizer that hands every call to a wrapped one (the base of contrib.estimator's
gradient-clipping and tower optimizers, which change only what they must)."""

from __future__ import annotations

from tensorflux.train.optimizer import Optimizer


class DelegatingOptimizer(Optimizer):
    """Delegates `compute_gradients`, `apply_gradients`, slots and variables to `optimizer`."""

    def __init__(self, optimizer, name):
        super().__init__(False, name)
        self._optimizer = optimizer

    def compute_gradients(self, *args, **kwargs):
        return self._optimizer.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        return self._optimizer.apply_gradients(grads_and_vars, global_step=global_step,
                                               name=name)

    def get_slot(self, *args, **kwargs):
        return self._optimizer.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._optimizer.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._optimizer.variables()
