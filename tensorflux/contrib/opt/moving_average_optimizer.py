"""`MovingAverageOptimizer`: keeps an exponential moving average of the trained variables.

`apply_gradients` runs the wrapped optimizer, then (after it, with `sequential_update`)
updates the averages; `swapping_saver()` returns a Saver that writes each average under its
variable's name (and the variable under the average's), so evaluating from the checkpoint
uses the averaged weights.
"""

from __future__ import annotations

from tensorflux.framework import graph as graph_mod
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import variables as variables_mod
from tensorflux.train import saver as saver_mod
from tensorflux.train.moving_averages import ExponentialMovingAverage
from tensorflux.train.optimizer import Optimizer

__all__ = ["MovingAverageOptimizer"]


class MovingAverageOptimizer(Optimizer):
    """Wraps `opt`; averages with decay `average_decay` (zero-debiased, as TF)."""

    def __init__(self, opt, average_decay=0.9999, num_updates=None, sequential_update=True):
        super().__init__(opt._use_locking, opt.get_name())
        self._optimizer = opt
        self._ema = ExponentialMovingAverage(average_decay, num_updates=num_updates,
                                             zero_debias=True)
        self._swapped_variable_name_map = None
        self._sequential_update = sequential_update

    def compute_gradients(self, *args, **kwargs):
        return self._optimizer.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The wrapped update followed by the moving-average update (one grouped op)."""
        grads_and_vars = list(grads_and_vars)
        train_op = self._optimizer.apply_gradients(grads_and_vars, global_step=global_step,
                                                   name=name)
        var_list = [v for g, v in grads_and_vars if g is not None]
        self._swapped_variable_name_map = {}
        if self._sequential_update:
            with graph_mod.get_default_graph().control_dependencies([train_op]):
                ma_op = self._ema.apply(var_list)
        else:
            ma_op = self._ema.apply(var_list)
        for var in var_list:
            average = self._ema.average(var)
            self._swapped_variable_name_map[var.op.name] = average.op.name
            self._swapped_variable_name_map[average.op.name] = var.op.name
        return control_flow_ops.group(train_op, ma_op, name="train_with_avg")

    def _find_swapped(self, by_name, name, tensor):
        swapped = self._swapped_variable_name_map.get(name)
        if swapped is None:
            return tensor
        if swapped in by_name:
            return by_name[swapped]
        raise ValueError(f"Variable to swap {swapped} is not part of variables to save. This "
                         f"breaks MovingAverageOptimizer.")

    def swapping_saver(self, var_list=None, name="swapping_saver", **kwargs):
        """A Saver storing averages under the variables' names and vice versa.

        Raises:
            RuntimeError: called before apply_gradients / minimize.
            ValueError: a variable's average is not among `var_list`.
        """
        if self._swapped_variable_name_map is None:
            raise RuntimeError("Must call apply_gradients or minimize before creating the "
                               "swapping_saver()")
        if var_list is None:
            var_list = variables_mod.global_variables()
        if not isinstance(var_list, dict):
            var_list = saver_mod.op_list_to_dict(var_list)
        by_name = {}
        for key, value in var_list.items():
            if isinstance(value, (list, tuple)):
                for part in value:
                    by_name[part.op.name] = part
            else:
                by_name[key] = value
        swapped = {}
        for key, value in var_list.items():
            if isinstance(value, (list, tuple)):
                swapped[key] = [self._find_swapped(by_name, p.op.name, p) for p in value]
            else:
                swapped[key] = self._find_swapped(by_name, key, value)
        return saver_mod.Saver(swapped, name=name, **kwargs)
