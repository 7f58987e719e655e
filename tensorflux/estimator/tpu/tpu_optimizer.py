"""`tf.tpu.CrossShardOptimizer` (`tf.contrib.tpu.CrossShardOptimizer`): on a TPU it averages
gradients across shards; outside a TPU shard context TF 1.15 uses one shard, so it applies
the wrapped optimizer's updates unchanged (the loss scaled by 1 under MEAN)."""

from __future__ import annotations

from tensorflux.losses import Reduction
from tensorflux.train.optimizer import Optimizer

__all__ = ["CrossShardOptimizer"]


class CrossShardOptimizer(Optimizer):
    """Wraps `opt`; with one shard (the CPU) its updates are `opt`'s.

    Raises:
        ValueError: a reduction other than SUM or MEAN.
    """

    def __init__(self, opt, reduction=Reduction.MEAN,
                 name="CrossShardOptimizer", group_assignment=None):
        if reduction not in (Reduction.SUM, Reduction.MEAN):
            raise ValueError(f"Unsupported reduction: {reduction}.")
        super().__init__(False, name)
        self._opt = opt
        self._reduction = reduction
        self._group_assignment = group_assignment

    def compute_gradients(self, loss, var_list=None, **kwargs):
        return self._opt.compute_gradients(loss, var_list=var_list, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        return self._opt.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._opt.variables()
