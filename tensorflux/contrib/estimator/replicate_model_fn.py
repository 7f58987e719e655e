"""`tf.contrib.estimator.replicate_model_fn` and `TowerOptimizer` for one tower.

TF 1.15 split each batch across the local GPUs, ran one model_fn copy per tower and averaged
the gradients. tensorflux runs on CPUs only, so there is one tower: the model_fn runs as is
(on `devices[0]` when given) and TowerOptimizer is its wrapped optimizer.
"""

from __future__ import annotations

from tensorflux import losses as losses_lib
from tensorflux.contrib.estimator.delegating_optimizer import DelegatingOptimizer
from tensorflux.estimator.model_fn import fn_args
from tensorflux.framework.scopes import device as device_scope
from tensorflux.train.optimizer import Optimizer

__all__ = ["replicate_model_fn", "TowerOptimizer"]


def replicate_model_fn(model_fn, loss_reduction=losses_lib.Reduction.SUM_BY_NONZERO_WEIGHTS,
                       devices=None):
    """`model_fn` replicated over `devices` (one tower: at most one device).

    Args:
        model_fn: an Estimator model_fn.
        loss_reduction: how tower losses would be combined (one tower: unused but checked).
        devices: None (the local CPU) or a list of one device string.

    Returns:
        A model_fn with the same signature.

    Raises:
        ValueError: loss_reduction is NONE or unknown; more than one device.
    """
    if loss_reduction not in losses_lib.Reduction.all() or \
            loss_reduction == losses_lib.Reduction.NONE:
        raise ValueError(f"Tower losses need to be reduced in some way, got loss_reduction "
                         f"{loss_reduction!r}")
    devices = list(devices or [])
    if len(devices) > 1:
        raise ValueError(f"replicate_model_fn: tensorflux runs one tower (no GPUs); got "
                         f"devices {devices}")

    def replicated_model_fn(features, labels, mode, params=None, config=None):
        kwargs = {}
        args = fn_args(model_fn)
        if "params" in args:
            kwargs["params"] = params
        if "config" in args:
            kwargs["config"] = config
        if "labels" in args:
            kwargs["labels"] = labels
        if "mode" in args:
            kwargs["mode"] = mode
        if not devices:
            return model_fn(features, **kwargs)
        with device_scope(devices[0]):
            return model_fn(features, **kwargs)

    return replicated_model_fn


class TowerOptimizer(DelegatingOptimizer):
    """Wraps the optimizer of a replicated model_fn; with one tower it delegates as is."""

    def __init__(self, optimizer_or_optimizer_fn):
        optimizer = optimizer_or_optimizer_fn
        if callable(optimizer) and not isinstance(optimizer, Optimizer):
            optimizer = optimizer()
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"TowerOptimizer needs a tf.train.Optimizer (or a function "
                            f"returning one), got {type(optimizer).__name__}")
        super().__init__(optimizer, "TowerOptimizer")
