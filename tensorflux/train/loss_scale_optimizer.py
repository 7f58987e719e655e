"""`tf.train.experimental.MixedPrecisionLossScaleOptimizer` and
`enable_mixed_precision_graph_rewrite` (TF 1.14/1.15).

The wrapper multiplies the loss by the loss scale before the wrapped optimizer computes its
gradients and divides the gradients by it; `apply_gradients` updates the loss scale and applies
the gradients only when they are all finite (a skipped step changes no variable and not the
global step). The graph rewrite TF performs for float16 on GPUs has nothing to do on a CPU-only
system, so enabling it only wraps the optimizer.
"""

from __future__ import annotations

from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.tensor import Tensor
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.platform import tf_logging as logging
from tensorflux.train import loss_scale as loss_scale_lib
from tensorflux.train.optimizer import Optimizer

__all__ = ["MixedPrecisionLossScaleOptimizer", "enable_mixed_precision_graph_rewrite",
           "disable_mixed_precision_graph_rewrite", "register_loss_scale_wrapper"]


class MixedPrecisionLossScaleOptimizer(Optimizer):
    """Loss scaling around `opt` (see the module docstring).

    Args:
        opt: a tf.train.Optimizer.
        loss_scale: a number (fixed), "dynamic", or a LossScale.

    Raises:
        ValueError: `opt` is not a tf.train.Optimizer, or `loss_scale` is None.
    """

    def __init__(self, opt, loss_scale):
        if not isinstance(opt, Optimizer):
            raise ValueError(f'"opt" must be an instance of Optimizer, but got: {type(opt)}')
        self._optimizer = opt
        self._loss_scale = loss_scale_lib.get(loss_scale)
        if self._loss_scale is None:
            raise ValueError("loss_scale cannot be None")
        super().__init__(opt._use_locking, opt.get_name())

    @property
    def loss_scale(self):
        return self._loss_scale

    @property
    def _checkpoint_dependencies(self) -> list:
        """The wrapped optimizer and the loss scale, under TF's local names."""
        return [("base_optimizer", self._optimizer), ("loss_scale", self._loss_scale)]

    def compute_gradients(self, loss, var_list=None, gate_gradients=Optimizer.GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """The wrapped optimizer's gradients of `loss * loss_scale`, divided by the scale."""
        scale = self._loss_scale()
        if callable(loss) and not isinstance(loss, Tensor):
            loss = loss()
        scaled = loss * math_ops.cast(scale, loss.dtype)
        grads_and_vars = self._optimizer.compute_gradients(
            scaled, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        return [(_unscaled(g, scale), v) for g, v in grads_and_vars]

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Updates the loss scale and applies the gradients when they are all finite."""
        grads_and_vars = list(grads_and_vars)
        update_scale, should_apply = self._loss_scale.update([g for g, _ in grads_and_vars])

        def apply():
            return self._optimizer.apply_gradients(grads_and_vars, global_step, name)

        if should_apply is True:
            applied = apply()
        else:
            applied = control_flow_ops.cond(should_apply, lambda: _as_op(apply()),
                                            control_flow_ops.no_op)
        return control_flow_ops.group(applied, update_scale)

    def get_slot(self, var, name):
        return self._optimizer.get_slot(var, name)

    def get_slot_names(self):
        return self._optimizer.get_slot_names()

    def variables(self):
        return self._optimizer.variables()


def _as_op(value):
    return value.op if isinstance(value, Tensor) else value


def _unscaled(grad, scale):
    if grad is None:
        return None
    reciprocal = 1.0 / scale
    if isinstance(grad, IndexedSlices):
        return IndexedSlices(grad.values * math_ops.cast(reciprocal, grad.values.dtype),
                             grad.indices, grad.dense_shape)
    return grad * math_ops.cast(reciprocal, grad.dtype)


_REWRITE = {"enabled": False}
_WRAPPERS = {}


def register_loss_scale_wrapper(optimizer_cls, wrapper_fn):
    """Makes `enable_mixed_precision_graph_rewrite` wrap instances of `optimizer_cls` (an
    optimizer family of a higher layer, e.g. Keras's) with `wrapper_fn(opt, loss_scale)`."""
    _WRAPPERS[optimizer_cls] = wrapper_fn


def enable_mixed_precision_graph_rewrite(opt, loss_scale="dynamic"):
    """`opt` wrapped in a MixedPrecisionLossScaleOptimizer (the float16 graph rewrite itself
    only changes GPU kernels, which tensorflux does not have: logged once).

    Raises:
        ValueError: `opt` is neither a tf.train nor a (registered) Keras optimizer, or is
            already loss-scaled.
    """
    if isinstance(opt, MixedPrecisionLossScaleOptimizer):
        raise ValueError('"opt" must not already be an instance of a '
                         'MixedPrecisionLossScaleOptimizer. `enable_mixed_precision_graph_'
                         'rewrite` will automatically wrap the optimizer with a '
                         'MixedPrecisionLossScaleOptimizer.')
    wrapper = next((fn for cls, fn in _WRAPPERS.items() if isinstance(opt, cls)), None)
    if wrapper is None and not isinstance(opt, Optimizer):
        raise ValueError('"opt" must be an instance of a tf.train.Optimizer or a '
                         f"tf.keras.optimizers.Optimizer, but got: {opt!r}")
    if not _REWRITE["enabled"]:
        logging.warning("Mixed precision graph rewrite enabled: there is no GPU, so only loss "
                        "scaling applies; the graph keeps its float32 kernels.")
    _REWRITE["enabled"] = True
    if wrapper is not None:
        return wrapper(opt, loss_scale)
    return MixedPrecisionLossScaleOptimizer(opt, loss_scale)


def disable_mixed_precision_graph_rewrite():
    """Undoes `enable_mixed_precision_graph_rewrite` for graphs built later."""
    _REWRITE["enabled"] = False
