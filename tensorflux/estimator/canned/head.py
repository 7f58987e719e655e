"""Heads of the canned estimators: from logits to predictions, loss, metrics and exports.

A head turns the model's logits into the EstimatorSpec of a mode, with TF 1.15's keys:
classifiers predict 'logits', 'probabilities', 'class_ids', 'classes' (binary adds
'logistic') and evaluate 'accuracy', 'average_loss' (binary adds 'auc',
'auc_precision_recall', 'precision', 'recall', 'label/mean', 'prediction/mean',
'accuracy_baseline'); regressors predict 'predictions' and evaluate 'average_loss',
'label/mean', 'prediction/mean'. The training loss is the weighted per-example loss reduced
by `loss_reduction` (TF1 canned estimators: SUM over the batch).
"""

from __future__ import annotations

import abc

from tensorflux import losses as losses_lib
from tensorflux import metrics as metrics_lib
from tensorflux import summary as summary_lib
from tensorflux.estimator import export_output
from tensorflux.estimator.model_fn import EstimatorSpec, ModeKeys, fn_args
from tensorflux.framework import dtypes
from tensorflux.framework.scopes import control_dependencies, name_scope
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.metrics import area_under_curve as metrics_auc
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import gather_scatter as gather_ops
from tensorflux.ops.array import padding as pad_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.debug import checks as check_ops
from tensorflux.ops.debug import logging as logging_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import sequence as sequence_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.nn import core as nn_ops
from tensorflux.ops.nn import functions as nn_impl
from tensorflux.ops.strings import conversion as string_ops
from tensorflux.saved_model import signature_constants
from tensorflux.train import training_util

_DEFAULT_SERVING_KEY = signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
_CLASSIFY_KEY = "classification"
_REGRESS_KEY = "regression"
_PREDICT_KEY = "predict"


def _check_weight_column(weight_column):
    if weight_column is None:
        return None
    key = weight_column if isinstance(weight_column, str) else getattr(weight_column, "key",
                                                                        None)
    if not isinstance(key, str):
        raise TypeError(f"Weight column must be either a string or _NumericColumn. Given "
                        f"type: {type(weight_column)}.")
    return weight_column


def _weights(features, weight_column):
    if weight_column is None:
        return 1.0
    key = weight_column if isinstance(weight_column, str) else weight_column.key
    if not isinstance(features, dict) or key not in features:
        raise ValueError(f"Weight column {key!r} is not in features "
                         f"({sorted(features) if isinstance(features, dict) else features}).")
    weights = features[key]
    if isinstance(weights, SparseTensor):
        raise ValueError(f"Weight column {key} should be a dense Tensor.")
    weights = cast_ops.cast(convert_to_tensor(weights), dtypes.float32)
    if not isinstance(weight_column, str) and weight_column.normalizer_fn is not None:
        weights = weight_column.normalizer_fn(weights)
    return shape_ops.reshape(weights, [-1, 1])


def _labels_2d(labels, dimension):
    if labels is None:
        raise ValueError("You must provide a labels Tensor. Given: None. Suggested "
                         "troubleshooting steps: Check that your data contain your label "
                         "feature. Check that your input_fn properly parses and returns "
                         "labels.")
    if isinstance(labels, dict):
        if len(labels) != 1:
            raise ValueError(f"labels must be a Tensor (or a dict of one); got keys "
                             f"{sorted(labels)}")
        (labels,) = labels.values()
    if isinstance(labels, SparseTensor):
        raise ValueError("SparseTensor labels are not supported.")
    labels = convert_to_tensor(labels)
    return shape_ops.reshape(labels, [-1, dimension])


class _Head(abc.ABC):
    """The shared mode logic; subclasses say how logits become predictions and loss."""

    def __init__(self, weight_column, loss_reduction, name=None, loss_fn=None):
        if loss_reduction not in losses_lib.Reduction.all() or \
                loss_reduction == losses_lib.Reduction.NONE:
            raise ValueError(f"Invalid loss_reduction: {loss_reduction}")
        if loss_fn is not None:
            args = fn_args(loss_fn)
            if "labels" not in args or "logits" not in args:
                raise ValueError(f"loss_fn must contain argument: labels and logits. Given "
                                 f"arguments: {args}")
        self._weight_column = _check_weight_column(weight_column)
        self._loss_reduction = loss_reduction
        self._name = name
        self._loss_fn = loss_fn

    @property
    def name(self):
        return self._name

    @property
    def loss_reduction(self):
        return self._loss_reduction

    def _custom_loss(self, labels, logits, features):
        args = fn_args(self._loss_fn)
        kwargs = {}
        if "features" in args:
            kwargs["features"] = features
        if "loss_reduction" in args:
            kwargs["loss_reduction"] = self._loss_reduction
        return self._loss_fn(labels=labels, logits=logits, **kwargs)

    @property
    @abc.abstractmethod
    def logits_dimension(self) -> int:
        ...

    def create_estimator_spec(self, features, mode, logits, labels=None, optimizer=None,
                              trainable_variables=None, train_op_fn=None, update_ops=None,
                              regularization_losses=None):
        """The EstimatorSpec of `mode` for `logits` (`[batch, logits_dimension]`).

        In TRAIN the train op is `optimizer.minimize(loss)` (over `trainable_variables`,
        incrementing the global step) or `train_op_fn(loss)`; `regularization_losses` are
        added to the training loss and `update_ops` run with the train op.

        Raises:
            ValueError: TRAIN with neither or both of optimizer and train_op_fn; missing or
                malformed labels.
        """
        with name_scope("head"):
            logits = shape_ops.reshape(logits, [-1, self.logits_dimension])
            predictions = self._predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode, predictions=predictions,
                                     export_outputs=self._export_outputs(predictions))
            label_ids, unweighted = self._unweighted_loss(logits, labels)
            if self._loss_fn is not None:
                unweighted = self._custom_loss(self._loss_fn_labels(label_ids), logits,
                                               features)
            weights = _weights(features, self._weight_column)
            loss = losses_lib.compute_weighted_loss(unweighted, weights=weights,
                                                    reduction=self._loss_reduction)
            training_loss = loss  # before regularization, as TF's mean loss
            if regularization_losses:
                loss = math_ops.add_n([loss] + list(regularization_losses))
            if mode == ModeKeys.EVAL:
                metrics = self._metrics(label_ids, predictions, unweighted, weights)
                return EstimatorSpec(mode, predictions=predictions, loss=loss,
                                     eval_metric_ops=metrics)
            if (optimizer is None) == (train_op_fn is None):
                raise ValueError("Exactly one of optimizer and train_op_fn must be set in "
                                 "TRAIN mode.")
            mean_loss = None
            if self._loss_reduction == losses_lib.Reduction.SUM:
                # As TF 1.x: `head/truediv` is the training loss over the example weights
                # (programs log it by that name), summarised only for SUM reduction.
                weight_sum = reduction_ops.reduce_sum(
                    weights * array_ops.ones_like(unweighted))
                mean_loss = training_loss / weight_sum
        summary_lib.scalar("loss", loss)
        if mean_loss is not None:
            summary_lib.scalar("average_loss", mean_loss)
        if optimizer is not None:
            train_op = optimizer.minimize(loss, global_step=training_util.get_global_step(),
                                          var_list=trainable_variables)
        else:
            train_op = train_op_fn(loss)
        if update_ops:
            train_op = control_flow_ops.group(train_op, *update_ops)
        return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)

    def _loss_fn_labels(self, label_ids):
        return label_ids


class ClassificationHead(_Head):
    """Binary (sigmoid cross entropy, one logit) or multi-class (softmax cross entropy)
    classification, with optional string `label_vocabulary`.

    Raises:
        ValueError: n_classes < 2, or a vocabulary of the wrong size or type.
    """

    def __init__(self, n_classes=2, weight_column=None, label_vocabulary=None,
                 loss_reduction=losses_lib.Reduction.SUM, name=None, loss_fn=None,
                 thresholds=None):
        super().__init__(weight_column, loss_reduction, name, loss_fn)
        self._thresholds = tuple(float(t) for t in thresholds or ())
        if any(not 0.0 < t < 1.0 for t in self._thresholds):
            raise ValueError(f"thresholds not in (0, 1): {self._thresholds}.")
        if n_classes is None or n_classes < 2:
            raise ValueError(f"n_classes must be > 1 for classification: {n_classes}.")
        if label_vocabulary is not None:
            if not isinstance(label_vocabulary, (list, tuple)) or not all(
                    isinstance(v, str) for v in label_vocabulary):
                raise ValueError(f"label_vocabulary should be a list or a tuple of strings. "
                                 f"Given type: {type(label_vocabulary)}")
            if len(label_vocabulary) != n_classes:
                raise ValueError(f"label_vocabulary must have n_classes ({n_classes}) "
                                 f"elements; got {len(label_vocabulary)}.")
        self._n_classes = n_classes
        self._label_vocabulary = list(label_vocabulary) if label_vocabulary else None

    @property
    def logits_dimension(self) -> int:
        return 1 if self._n_classes == 2 else self._n_classes

    def _class_strings(self, ids):
        if self._label_vocabulary is not None:
            table = array_ops.constant(self._label_vocabulary, dtype=dtypes.string)
            return gather_ops.gather(table, ids)
        return string_ops.as_string(ids)

    def _predictions(self, logits):
        batch = shape_ops.shape(logits)[:1]
        if self._n_classes == 2:
            two = concat_ops.concat([array_ops.zeros_like(logits), logits], 1)
            probabilities = nn_ops.softmax(two)
            class_ids = reduction_ops.argmax(two, 1)
        else:
            probabilities = nn_ops.softmax(logits)
            class_ids = reduction_ops.argmax(logits, 1)
        class_ids = shape_ops.expand_dims(cast_ops.cast(class_ids, dtypes.int64), -1)
        all_ids = pad_ops.tile(
            shape_ops.expand_dims(sequence_ops.range(self._n_classes, dtype=dtypes.int64), 0),
            concat_ops.concat([batch, [1]], 0))
        predictions = {"logits": logits, "probabilities": probabilities,
                       "class_ids": class_ids, "classes": self._class_strings(class_ids),
                       "all_class_ids": all_ids, "all_classes": self._class_strings(all_ids)}
        if self._n_classes == 2:
            predictions["logistic"] = unary_ops.sigmoid(logits)
        return predictions

    def _export_outputs(self, predictions):
        classify = export_output.ClassificationOutput(scores=predictions["probabilities"],
                                                      classes=predictions["all_classes"])
        outputs = {_DEFAULT_SERVING_KEY: classify, _CLASSIFY_KEY: classify,
                   _PREDICT_KEY: export_output.PredictOutput(predictions)}
        if "logistic" in predictions:  # binary heads also serve the Regression API (TF1)
            outputs[_REGRESS_KEY] = export_output.RegressionOutput(value=predictions["logistic"])
        return outputs

    def _label_ids(self, labels):
        labels = _labels_2d(labels, 1)
        if self._label_vocabulary is not None:
            if labels.dtype != dtypes.string:
                raise ValueError("Labels dtype should be string if there is a vocabulary. "
                                 f"Instead got {labels.dtype}")
            vocab = array_ops.constant(self._label_vocabulary, dtype=dtypes.string)
            equal = comparison_ops.equal(labels, vocab)
            matches = cast_ops.cast(equal, dtypes.int64)
            found = logging_ops.Assert(
                reduction_ops.reduce_all(reduction_ops.reduce_any(equal, 1)),
                [f"Labels must be in the label_vocabulary {self._label_vocabulary}"])
            with control_dependencies([found]):
                return shape_ops.expand_dims(reduction_ops.argmax(matches, 1), -1)
        if self._n_classes == 2 and (labels.dtype.is_bool or labels.dtype.is_floating):
            # The binary head takes bool and float 0/1 labels too (TF casts them to float).
            floats = self._binary_float_labels(labels)
            return cast_ops.cast(floats, dtypes.int64)
        if not labels.dtype.is_integer:
            raise ValueError(f"Labels dtype should be integer. Instead got {labels.dtype}.")
        labels = cast_ops.cast(labels, dtypes.int64)
        checks = [check_ops.assert_less(labels, array_ops.constant(self._n_classes,
                                                                   dtypes.int64),
                                        message="Labels must <= n_classes - 1"),
                  check_ops.assert_non_negative(labels, message="Labels must >= 0")]
        with control_dependencies(checks):
            return array_ops.identity(labels)

    @staticmethod
    def _binary_float_labels(labels):
        """bool/float labels of the binary head as float32, checked to lie in [0, 1]."""
        floats = cast_ops.cast(labels, dtypes.float32)
        checks = [check_ops.assert_less_equal(floats, array_ops.constant(1.0),
                                              message="Labels must <= n_classes - 1"),
                  check_ops.assert_non_negative(floats, message="Labels must >= 0")]
        with control_dependencies(checks):
            return array_ops.identity(floats)

    def _unweighted_loss(self, logits, labels):
        ids = self._label_ids(labels)
        if self._n_classes == 2:
            targets = cast_ops.cast(ids, dtypes.float32)
            label_2d = _labels_2d(labels, 1)
            if self._label_vocabulary is None and label_2d.dtype.is_floating:
                # Soft float labels in [0, 1] enter the loss as they are.
                targets = self._binary_float_labels(label_2d)
            loss = nn_impl.sigmoid_cross_entropy_with_logits(labels=targets, logits=logits)
        else:
            loss = shape_ops.expand_dims(nn_impl.sparse_softmax_cross_entropy_with_logits(
                labels=shape_ops.squeeze(ids, [1]), logits=logits), -1)
        return ids, loss

    def _metrics(self, label_ids, predictions, unweighted, weights):
        metrics = {
            "average_loss": metrics_lib.mean(unweighted, weights=weights),
            "accuracy": metrics_lib.accuracy(label_ids, predictions["class_ids"],
                                             weights=weights),
        }
        if self._n_classes == 2:
            logistic = predictions["logistic"]
            float_labels = cast_ops.cast(label_ids, dtypes.float32)
            label_mean = metrics_lib.mean(float_labels, weights=weights)
            metrics["label/mean"] = label_mean
            metrics["prediction/mean"] = metrics_lib.mean(logistic, weights=weights)
            metrics["accuracy_baseline"] = (
                math_ops.maximum(label_mean[0], 1.0 - label_mean[0]), label_mean[1])
            metrics["auc"] = metrics_auc.auc(label_ids, logistic, weights=weights)
            metrics["auc_precision_recall"] = metrics_auc.auc(
                label_ids, logistic, weights=weights, curve="PR",
                summation_method="careful_interpolation")
            metrics["precision"] = metrics_lib.precision(label_ids, predictions["class_ids"],
                                                         weights=weights)
            metrics["recall"] = metrics_lib.recall(label_ids, predictions["class_ids"],
                                                   weights=weights)
            for threshold in self._thresholds:
                above = cast_ops.cast(comparison_ops.greater_equal(
                    logistic, threshold), dtypes.int64)
                suffix = f"positive_threshold_{threshold:g}"
                metrics[f"accuracy/{suffix}"] = metrics_lib.accuracy(label_ids, above,
                                                                      weights=weights)
                metrics[f"precision/{suffix}"] = metrics_lib.precision(label_ids, above,
                                                                        weights=weights)
                metrics[f"recall/{suffix}"] = metrics_lib.recall(label_ids, above,
                                                                  weights=weights)
        return metrics

    def _loss_fn_labels(self, label_ids):
        return cast_ops.cast(label_ids, dtypes.float32) if self._n_classes == 2 else label_ids


class RegressionHead(_Head):
    """Mean squared error regression of `label_dimension` float targets (TF 1.15
    `tf.estimator.RegressionHead`; the canned regressors use it with loss_reduction SUM).

    Raises:
        ValueError: label_dimension < 1.
    """

    def __init__(self, label_dimension=1, weight_column=None,
                 loss_reduction=losses_lib.Reduction.SUM_OVER_BATCH_SIZE, loss_fn=None,
                 inverse_link_fn=None, name=None):
        super().__init__(weight_column, loss_reduction, name, loss_fn)
        if label_dimension is None or label_dimension < 1:
            raise ValueError(f"Invalid label_dimension {label_dimension}.")
        self._label_dimension = label_dimension
        self._inverse_link_fn = inverse_link_fn

    @property
    def logits_dimension(self) -> int:
        return self._label_dimension

    def _predictions(self, logits):
        if self._inverse_link_fn is None:
            return {"predictions": logits}
        return {"predictions": self._inverse_link_fn(logits), "logits": logits}

    def _export_outputs(self, predictions):
        outputs = {_PREDICT_KEY: export_output.PredictOutput(predictions)}
        if self._label_dimension == 1:
            regress = export_output.RegressionOutput(predictions["predictions"])
            outputs[_DEFAULT_SERVING_KEY] = regress
            outputs[_REGRESS_KEY] = regress
        else:
            outputs[_DEFAULT_SERVING_KEY] = outputs[_PREDICT_KEY]
        return outputs

    def _unweighted_loss(self, logits, labels):
        labels = _labels_2d(labels, self._label_dimension)
        if not (labels.dtype.is_floating or labels.dtype.is_integer):
            raise ValueError(f"Labels dtype should be numeric. Instead got {labels.dtype}.")
        labels = cast_ops.cast(labels, dtypes.float32)
        return labels, math_ops.squared_difference(labels, logits)

    def _metrics(self, labels, predictions, unweighted, weights):
        return {"average_loss": metrics_lib.mean(unweighted, weights=weights),
                "label/mean": metrics_lib.mean(labels, weights=weights),
                "prediction/mean": metrics_lib.mean(predictions["predictions"],
                                                    weights=weights)}



class BinaryClassHead(ClassificationHead):
    """`tf.estimator.BinaryClassHead`: sigmoid cross entropy on one logit; `thresholds` add
    accuracy/precision/recall at each threshold of the positive probability.

    Raises:
        ValueError: a bad vocabulary, threshold or loss_fn.
    """

    def __init__(self, weight_column=None, thresholds=None, label_vocabulary=None,
                 loss_reduction=losses_lib.Reduction.SUM_OVER_BATCH_SIZE, loss_fn=None,
                 name=None):
        super().__init__(2, weight_column, label_vocabulary, loss_reduction, name, loss_fn,
                         thresholds)


class MultiClassHead(ClassificationHead):
    """`tf.estimator.MultiClassHead`: softmax cross entropy over `n_classes` > 2 logits.

    Raises:
        ValueError: n_classes <= 2, a bad vocabulary or loss_fn.
    """

    def __init__(self, n_classes, weight_column=None, label_vocabulary=None,
                 loss_reduction=losses_lib.Reduction.SUM_OVER_BATCH_SIZE, loss_fn=None,
                 name=None):
        if n_classes is None or n_classes <= 2:
            raise ValueError(f"n_classes must be > 2: {n_classes}.")
        super().__init__(n_classes, weight_column, label_vocabulary, loss_reduction, name,
                         loss_fn)
