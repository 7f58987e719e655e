"""`tf.keras.mixed_precision.experimental.LossScaleOptimizer`: loss scaling around a Keras
optimizer (TF 1.14/1.15).

The wrapped optimizer keeps its hyper-parameters and `lr` variable; each step computes the
gradients of `loss * loss_scale`, divides them by the scale, and applies them only when
they are all finite (a dynamic scale then halves; see `tf.train.experimental`). It is also
what `tf.train.experimental.enable_mixed_precision_graph_rewrite` returns for a Keras
optimizer.
"""

from __future__ import annotations

from tensorflux.keras import optimizers
from tensorflux.train import loss_scale as loss_scale_lib
from tensorflux.train import loss_scale_optimizer as train_lso

__all__ = ["LossScaleOptimizer"]


class LossScaleOptimizer(optimizers.Optimizer):
    """A Keras optimizer applying `optimizer`'s updates with loss scaling.

    Args:
        optimizer: a tf.keras optimizer (not already loss-scaled).
        loss_scale: a number (fixed scale), "dynamic", or a tf.train.experimental.LossScale.

    Raises:
        ValueError: `optimizer` is not a Keras optimizer, or `loss_scale` is None.
    """

    def __init__(self, optimizer, loss_scale):
        if not isinstance(optimizer, optimizers.Optimizer) or \
                isinstance(optimizer, LossScaleOptimizer):
            raise ValueError('"optimizer" must be an instance of tf.keras.optimizers.Optimizer '
                             f"(not already loss-scaled), but got: {optimizer!r}")
        self._optimizer = optimizer
        self._loss_scale = loss_scale_lib.get(loss_scale)
        if self._loss_scale is None:
            raise ValueError("loss_scale cannot be None")
        super().__init__(optimizer.learning_rate, None, optimizer._name)
        self._wrapped_tf = None

    @property
    def loss_scale(self):
        """The LossScale object."""
        return self._loss_scale

    @property
    def lr(self):
        return self._optimizer.lr

    @property
    def tf_optimizer(self):
        inner = self._optimizer.tf_optimizer
        if self._wrapped_tf is None or self._wrapped_tf._optimizer is not inner:
            self._wrapped_tf = train_lso.MixedPrecisionLossScaleOptimizer(inner,
                                                                          self._loss_scale)
        return self._wrapped_tf

    def _current_tf_optimizer(self):
        return self._optimizer._current_tf_optimizer()

    @property
    def _checkpoint_dependencies(self):
        return self._optimizer._checkpoint_dependencies

    def get_config(self):
        return {"optimizer": {"class_name": type(self._optimizer).__name__,
                              "config": self._optimizer.get_config()},
                "loss_scale": getattr(self._loss_scale, "get_config", lambda: None)()}


train_lso.register_loss_scale_wrapper(optimizers.Optimizer, LossScaleOptimizer)
