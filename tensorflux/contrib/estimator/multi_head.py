"""`tf.contrib.estimator.multi_head` (TF 1.15): several named heads trained together.

Logits and labels are dicts keyed by head name (logits may also be one tensor, split along
its last axis in head order). The loss is the (weighted) sum of the heads' losses;
predictions are keyed `(head_name, key)`; eval metrics are each head's, keyed
`<metric>/<head_name>`, plus `loss/<head_name>`; exports are `<head_name>/<key>` (the head's
default signature as `<head_name>`), the first head's default as `serving_default`, and one
`predict` output of every head's predictions keyed `<head_name>/<key>`.
"""

from __future__ import annotations

from tensorflux import metrics as metrics_lib
from tensorflux.estimator import export_output
from tensorflux.estimator.canned import head as head_lib
from tensorflux.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorflux.framework.scopes import name_scope
from tensorflux.framework.tensor import Tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.train import training_util

__all__ = ["multi_head", "MultiHead"]


class MultiHead:
    """Heads sharing one model: see the module docstring.

    Raises:
        ValueError: no heads, an unnamed head, duplicate names, or head_weights of another
            length.
    """

    def __init__(self, heads, head_weights=None):
        heads = list(heads or [])
        if not heads:
            raise ValueError(f"Must specify heads. Given: {heads}")
        names = [head.name for head in heads]
        if any(not name for name in names):
            raise ValueError(f"All given heads must have name specified. Given: {names}")
        if len(set(names)) != len(names):
            raise ValueError(f"Head names must be unique. Given: {names}")
        if head_weights is not None and len(head_weights) != len(heads):
            raise ValueError(f"heads and head_weights must have the same size. Given len(heads): "
                             f"{len(heads)}. Given len(head_weights): {len(head_weights)}.")
        self._heads = tuple(heads)
        self._head_weights = tuple(head_weights) if head_weights is not None else None

    @property
    def name(self):
        return "_".join(head.name for head in self._heads)

    @property
    def logits_dimension(self) -> int:
        return sum(head.logits_dimension for head in self._heads)

    def _split_logits(self, logits):
        if isinstance(logits, dict):
            missing = [h.name for h in self._heads if h.name not in logits]
            if missing:
                raise ValueError(f"logits has no entry for heads {missing}; keys: "
                                 f"{sorted(logits)}")
            return [logits[h.name] for h in self._heads]
        if not isinstance(logits, Tensor):
            raise ValueError(f"logits must be a dict keyed by head name or a Tensor, got "
                             f"{type(logits).__name__}")
        sizes = [h.logits_dimension for h in self._heads]
        return array_ops.split(logits, sizes, axis=-1)

    def _split_labels(self, labels):
        if labels is None:
            return [None] * len(self._heads)
        if not isinstance(labels, dict):
            raise ValueError(f"labels must be a dict keyed by head name. Given: {labels}")
        missing = [h.name for h in self._heads if h.name not in labels]
        if missing:
            raise ValueError(f"labels has no entry for heads {missing}; keys: {sorted(labels)}")
        return [labels[h.name] for h in self._heads]

    def _weighted_loss(self, specs):
        losses = [spec.loss for spec in specs]
        if self._head_weights is not None:
            losses = [loss * weight for loss, weight in zip(losses, self._head_weights)]
        return math_ops.add_n(losses)

    def _predictions(self, specs):
        return {(head.name, key): value for head, spec in zip(self._heads, specs)
                for key, value in spec.predictions.items()}

    def create_estimator_spec(self, features, mode, logits, labels=None, optimizer=None,
                              train_op_fn=None, regularization_losses=None):
        """The EstimatorSpec of `mode` for every head together.

        Raises:
            ValueError: TRAIN with neither or both of optimizer and train_op_fn; missing
                logits or labels of a head.
        """
        all_logits = self._split_logits(logits)
        with name_scope("multi_head"):
            if mode == ModeKeys.PREDICT:
                specs = [head.create_estimator_spec(features, mode, head_logits)
                         for head, head_logits in zip(self._heads, all_logits)]
                return EstimatorSpec(mode, predictions=self._predictions(specs),
                                     export_outputs=self._export_outputs(specs))
            all_labels = self._split_labels(labels)
            if mode == ModeKeys.EVAL:
                specs = [head.create_estimator_spec(features, mode, head_logits, head_labels)
                         for head, head_logits, head_labels in
                         zip(self._heads, all_logits, all_labels)]
                loss = self._weighted_loss(specs)
                if regularization_losses:
                    loss = math_ops.add_n([loss] + list(regularization_losses))
                metrics = {}
                for head, spec in zip(self._heads, specs):
                    for key, value in spec.eval_metric_ops.items():
                        metrics[f"{key}/{head.name}"] = value
                    metrics[f"loss/{head.name}"] = metrics_lib.mean(spec.loss)
                return EstimatorSpec(mode, predictions=self._predictions(specs), loss=loss,
                                     eval_metric_ops=metrics)
            if (optimizer is None) == (train_op_fn is None):
                raise ValueError("Exactly one of optimizer and train_op_fn must be set in "
                                 "TRAIN mode.")
            # Each head builds its loss; the one train op minimizes their weighted sum.
            specs = [head.create_estimator_spec(
                features, mode, head_logits, head_labels,
                train_op_fn=lambda _: control_flow_ops.no_op())
                for head, head_logits, head_labels in zip(self._heads, all_logits, all_labels)]
            loss = self._weighted_loss(specs)
            if regularization_losses:
                loss = math_ops.add_n([loss] + list(regularization_losses))
            if optimizer is not None:
                train_op = optimizer.minimize(loss, global_step=training_util.get_global_step())
            else:
                train_op = train_op_fn(loss)
            return EstimatorSpec(mode, predictions=self._predictions(specs), loss=loss,
                                 train_op=train_op)

    def _export_outputs(self, specs):
        outputs, predict_outputs = {}, {}
        for head, spec in zip(self._heads, specs):
            for key, value in spec.export_outputs.items():
                name = head.name if key == head_lib._DEFAULT_SERVING_KEY else f"{head.name}/{key}"
                outputs[name] = value
                if key == head_lib._PREDICT_KEY and isinstance(value,
                                                               export_output.PredictOutput):
                    for out_key, tensor in value.outputs.items():
                        predict_outputs[f"{head.name}/{out_key}"] = tensor
        outputs[head_lib._DEFAULT_SERVING_KEY] = outputs[self._heads[0].name]
        outputs[head_lib._PREDICT_KEY] = export_output.PredictOutput(predict_outputs)
        return outputs


def multi_head(heads, head_weights=None):
    """A head combining `heads` (each with a unique name) for multi-objective learning.

    Args:
        heads: a list of heads, each created with `name=`.
        head_weights: optional weights of the heads' losses (default 1 each).

    Returns:
        A MultiHead, usable wherever a head is (DNNEstimator, LinearEstimator, model_fns).

    Raises:
        ValueError: see MultiHead.

    Example:
        >>> head = tf.contrib.estimator.multi_head([
        ...     tf.contrib.estimator.multi_class_head(3, name="topic"),
        ...     tf.contrib.estimator.binary_classification_head(name="spam")])
    """
    return MultiHead(heads, head_weights)
