"""`tf.contrib.estimator` head factories (TF 1.15): binary, multi-class, regression, Poisson
and logistic regression heads over tensorflux's canned heads, and the multi-label head.

Every factory defaults to `loss_reduction=SUM_OVER_BATCH_SIZE`, as TF 1.15's contrib heads do.
"""

from __future__ import annotations

from tensorflux import losses as losses_lib
from tensorflux import metrics as metrics_lib
from tensorflux.estimator import export_output
from tensorflux.estimator.canned import head as head_lib
from tensorflux.estimator.canned.head import BinaryClassHead, MultiClassHead, RegressionHead
from tensorflux.framework import dtypes
from tensorflux.framework.scopes import control_dependencies
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.metrics import area_under_curve as metrics_auc
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import gather_scatter as gather_ops
from tensorflux.ops.debug import checks as check_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.nn import functions as nn_impl
from tensorflux.ops.sparse import composites as sparse_composites

__all__ = ["binary_classification_head", "multi_class_head", "regression_head",
           "poisson_regression_head", "logistic_regression_head", "multi_label_head",
           "MultiLabelHead"]

_SUM_OVER_BATCH_SIZE = losses_lib.Reduction.SUM_OVER_BATCH_SIZE


def binary_classification_head(weight_column=None, thresholds=None, label_vocabulary=None,
                               loss_reduction=_SUM_OVER_BATCH_SIZE, loss_fn=None, name=None):
    """A head for binary classification: sigmoid cross entropy on one logit.

    Raises:
        ValueError: thresholds outside (0, 1), a bad vocabulary or loss_fn.
    """
    return BinaryClassHead(weight_column=weight_column, thresholds=thresholds,
                           label_vocabulary=label_vocabulary, loss_reduction=loss_reduction,
                           loss_fn=loss_fn, name=name)


def multi_class_head(n_classes, weight_column=None, label_vocabulary=None,
                     loss_reduction=_SUM_OVER_BATCH_SIZE, loss_fn=None, name=None):
    """A head for single-label classification over `n_classes` > 2 classes (softmax).

    Raises:
        ValueError: n_classes <= 2, a bad vocabulary or loss_fn.
    """
    return MultiClassHead(n_classes, weight_column=weight_column,
                          label_vocabulary=label_vocabulary, loss_reduction=loss_reduction,
                          loss_fn=loss_fn, name=name)


def regression_head(weight_column=None, label_dimension=1, loss_reduction=_SUM_OVER_BATCH_SIZE,
                    loss_fn=None, inverse_link_fn=None, name=None):
    """A head for regression: mean squared error, or `loss_fn(labels, logits)`.

    Raises:
        ValueError: label_dimension < 1, a bad loss_reduction or loss_fn.
    """
    return RegressionHead(label_dimension=label_dimension, weight_column=weight_column,
                          loss_reduction=loss_reduction, loss_fn=loss_fn,
                          inverse_link_fn=inverse_link_fn, name=name)


def poisson_regression_head(weight_column=None, label_dimension=1,
                            loss_reduction=_SUM_OVER_BATCH_SIZE, compute_full_loss=True,
                            name=None):
    """A regression head with the log-Poisson loss; predictions are exp(logits)."""

    def _poisson_loss(labels, logits):
        return nn_impl.log_poisson_loss(targets=labels, log_input=logits,
                                        compute_full_loss=compute_full_loss)

    return RegressionHead(label_dimension=label_dimension, weight_column=weight_column,
                          loss_reduction=loss_reduction, loss_fn=_poisson_loss,
                          inverse_link_fn=unary_ops.exp, name=name)


def logistic_regression_head(weight_column=None, loss_reduction=_SUM_OVER_BATCH_SIZE,
                             name=None):
    """A regression head for targets in [0, 1]: sigmoid cross entropy; predictions are
    sigmoid(logits). Labels outside [0, 1] fail an assertion when the loss runs."""

    def _logistic_loss(labels, logits):
        checks = [check_ops.assert_non_negative(labels, message="Labels must be in range [0, 1]"),
                  check_ops.assert_less_equal(labels, array_ops.constant(1.0, labels.dtype),
                                              message="Labels must be in range [0, 1]")]
        with control_dependencies(checks):
            labels = array_ops.identity(labels)
        return nn_impl.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)

    return RegressionHead(label_dimension=1, weight_column=weight_column,
                          loss_reduction=loss_reduction, loss_fn=_logistic_loss,
                          inverse_link_fn=unary_ops.sigmoid, name=name)


class MultiLabelHead(head_lib._Head):
    """Multi-label classification: each of `n_classes` is an independent sigmoid; the loss is
    the sigmoid cross entropy averaged over classes, then weighted over the batch.

    Labels are a multi-hot [batch, n_classes] tensor, an integer SparseTensor of class ids,
    or (with `label_vocabulary`) a string SparseTensor of class names.

    Raises:
        ValueError: n_classes < 2, thresholds outside (0, 1), a bad vocabulary, or a class in
            classes_for_class_based_metrics outside [0, n_classes).
    """

    def __init__(self, n_classes, weight_column=None, thresholds=None, label_vocabulary=None,
                 loss_reduction=_SUM_OVER_BATCH_SIZE, loss_fn=None,
                 classes_for_class_based_metrics=None, name=None):
        super().__init__(weight_column, loss_reduction, name, loss_fn)
        if n_classes is None or n_classes < 2:
            raise ValueError(f"n_classes must be > 1 for multi-label classification. "
                             f"Given: {n_classes}")
        self._thresholds = tuple(float(t) for t in thresholds or ())
        if any(not 0.0 < t < 1.0 for t in self._thresholds):
            raise ValueError(f"thresholds must be in (0, 1) range. Given: {self._thresholds}")
        if label_vocabulary is not None:
            if not isinstance(label_vocabulary, (list, tuple)) or not all(
                    isinstance(v, str) for v in label_vocabulary):
                raise ValueError(f"label_vocabulary must be a list or tuple. Given type: "
                                 f"{type(label_vocabulary)}")
            if len(label_vocabulary) != n_classes:
                raise ValueError(f"Length of label_vocabulary must be n_classes ({n_classes}). "
                                 f"Given: {len(label_vocabulary)}")
        classes = []
        for c in classes_for_class_based_metrics or ():
            if isinstance(c, str):
                if label_vocabulary is None or c not in label_vocabulary:
                    raise ValueError(f"classes_for_class_based_metrics: {c!r} is not in "
                                     f"label_vocabulary")
                c = list(label_vocabulary).index(c)
            if not 0 <= c < n_classes:
                raise ValueError(f"All classes_for_class_based_metrics must be in range [0, "
                                 f"{n_classes - 1}]. Given: {classes_for_class_based_metrics}")
            classes.append(int(c))
        self._n_classes = n_classes
        self._label_vocabulary = list(label_vocabulary) if label_vocabulary else None
        self._classes_for_metrics = tuple(classes)

    @property
    def logits_dimension(self) -> int:
        return self._n_classes

    def _predictions(self, logits):
        return {"logits": logits, "probabilities": unary_ops.sigmoid(logits)}

    def _export_outputs(self, predictions):
        probabilities = predictions["probabilities"]
        names = (self._label_vocabulary if self._label_vocabulary is not None
                 else [str(i) for i in range(self._n_classes)])
        classes = gather_ops.gather(array_ops.constant(names, dtype=dtypes.string),
                                    array_ops.zeros_like(probabilities, dtype=dtypes.int32)
                                    + math_ops.range(self._n_classes))
        classify = export_output.ClassificationOutput(scores=probabilities, classes=classes)
        return {head_lib._DEFAULT_SERVING_KEY: classify, head_lib._CLASSIFY_KEY: classify,
                head_lib._PREDICT_KEY: export_output.PredictOutput(predictions)}

    def _multi_hot(self, labels):
        if labels is None:
            raise ValueError("You must provide a labels Tensor. Given: None.")
        if isinstance(labels, SparseTensor):
            values = labels.values
            if values.dtype == dtypes.string:
                if self._label_vocabulary is None:
                    raise ValueError("Labels dtype should be integer; string labels need a "
                                     "label_vocabulary.")
                vocab = array_ops.constant(self._label_vocabulary, dtype=dtypes.string)
                equal = comparison_ops.equal(array_ops.expand_dims(values, 1), vocab)
                values = reduction_ops.argmax(cast_ops.cast(equal, dtypes.int64), 1)
            elif not values.dtype.is_integer:
                raise ValueError(f"Labels dtype should be integer. Instead got "
                                 f"{values.dtype}.")
            ids = SparseTensor(labels.indices, cast_ops.cast(values, dtypes.int64),
                               labels.dense_shape)
            hot = sparse_composites.sparse_to_indicator(ids, self._n_classes)
            return cast_ops.cast(hot, dtypes.int64)
        labels = convert_to_tensor(labels)
        if not (labels.dtype.is_integer or labels.dtype == dtypes.bool_):
            raise ValueError(f"Labels dtype should be integer (multi-hot). Instead got "
                             f"{labels.dtype}.")
        labels = array_ops.reshape(cast_ops.cast(labels, dtypes.int64), [-1, self._n_classes])
        checks = [check_ops.assert_non_negative(labels, message="Labels must be 0 or 1"),
                  check_ops.assert_less_equal(labels, array_ops.constant(1, dtypes.int64),
                                              message="Labels must be 0 or 1")]
        with control_dependencies(checks):
            return array_ops.identity(labels)

    def _unweighted_loss(self, logits, labels):
        hot = self._multi_hot(labels)
        loss = nn_impl.sigmoid_cross_entropy_with_logits(
            labels=cast_ops.cast(hot, dtypes.float32), logits=logits)
        return hot, reduction_ops.reduce_mean(loss, axis=-1, keepdims=True)

    def _metrics(self, labels, predictions, unweighted, weights):
        probabilities = predictions["probabilities"]
        # weights are [batch, 1] (or 1.0 without a weight column): spread over the classes
        weights = (None if isinstance(weights, float)
                   else weights * array_ops.ones_like(probabilities))
        metrics = {
            "average_loss": metrics_lib.mean(unweighted, weights=None if weights is None
                                             else weights[:, :1]),
            "auc": metrics_auc.auc(labels, probabilities, weights=weights),
            "auc_precision_recall": metrics_auc.auc(labels, probabilities, weights=weights,
                                                    curve="PR"),
        }
        for threshold in self._thresholds:
            above = cast_ops.cast(comparison_ops.greater_equal(probabilities, threshold),
                                  dtypes.int64)
            suffix = f"positive_threshold_{threshold:g}"
            metrics[f"accuracy/{suffix}"] = metrics_lib.accuracy(labels, above, weights=weights)
            metrics[f"precision/{suffix}"] = metrics_lib.precision(labels, above, weights=weights)
            metrics[f"recall/{suffix}"] = metrics_lib.recall(labels, above, weights=weights)
        for c in self._classes_for_metrics:
            class_probs = probabilities[:, c:c + 1]
            class_labels = labels[:, c:c + 1]
            class_weights = None if weights is None else weights[:, c:c + 1]
            metrics[f"probability_mean/class{c}"] = metrics_lib.mean(class_probs,
                                                                     weights=class_weights)
            metrics[f"auc/class{c}"] = metrics_auc.auc(class_labels, class_probs,
                                                       weights=class_weights)
            metrics[f"auc_precision_recall/class{c}"] = metrics_auc.auc(
                class_labels, class_probs, weights=class_weights, curve="PR")
        return metrics

    def _loss_fn_labels(self, label_ids):
        return label_ids


def multi_label_head(n_classes, weight_column=None, thresholds=None, label_vocabulary=None,
                     loss_reduction=_SUM_OVER_BATCH_SIZE, loss_fn=None,
                     classes_for_class_based_metrics=None, name=None):
    """A head for multi-label classification (see MultiLabelHead).

    Raises:
        ValueError: bad n_classes, thresholds, vocabulary or class list.
    """
    return MultiLabelHead(n_classes, weight_column=weight_column, thresholds=thresholds,
                          label_vocabulary=label_vocabulary, loss_reduction=loss_reduction,
                          loss_fn=loss_fn,
                          classes_for_class_based_metrics=classes_for_class_based_metrics,
                          name=name)
