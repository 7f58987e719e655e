"""Keras metrics over confusion counts at thresholds (TF 1.13+): TruePositives,
FalsePositives, TrueNegatives, FalseNegatives, Precision, Recall and AUC.

Predictions are compared with each threshold (`y_pred > threshold` is a positive
prediction); labels are positive where nonzero. Every count is weighted by `sample_weight`.
"""

from __future__ import annotations

from tensorflux.framework import dtypes, tensor_conversion
from tensorflux.keras.metric_state import Metric, broadcast_weights
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_primitives
from tensorflux.ops.nn import core as nn_core

__all__ = ["TruePositives", "FalsePositives", "TrueNegatives", "FalseNegatives", "Precision",
           "Recall", "AUC", "MeanIoU", "SensitivityAtSpecificity", "SpecificityAtSensitivity"]

_EPSILON = 1e-7


def _thresholds(thresholds, default=0.5):
    if thresholds is None:
        values = [default]
    elif isinstance(thresholds, (list, tuple)):
        values = [float(t) for t in thresholds]
    else:
        values = [float(thresholds)]
    for t in values:
        if not 0.0 <= t <= 1.0:
            raise ValueError(f"Threshold values must be in [0, 1]. Invalid values: {values}")
    return values


class _ConfusionCounts(Metric):
    """Accumulates the counts named in `counts` ('tp', 'fp', 'tn', 'fn'), one per threshold."""

    counts = ("tp",)

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None,
                 default_threshold=0.5):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        if thresholds is None and top_k is not None:
            self.thresholds = [float("-inf")]  # a top-k score is a positive prediction
        else:
            self.thresholds = _thresholds(thresholds, default_threshold)
        self.top_k, self.class_id = top_k, class_id
        width = len(self.thresholds)
        names = {"tp": "true_positives", "fp": "false_positives", "tn": "true_negatives",
                 "fn": "false_negatives"}
        self._state = {c: self.add_weight(names[c], (width,)) for c in self.counts}

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds this batch's weighted counts at every threshold."""
        y_pred = math_ops.cast(tensor_conversion.convert_to_tensor(y_pred), dtypes.float32)
        y_true = tensor_conversion.convert_to_tensor(y_true)
        if self.top_k is not None:
            kth = nn_core.top_k(y_pred, self.top_k).values[..., -1:]
            y_pred = array_ops.where(math_ops.greater_equal(y_pred, kth), y_pred,
                                     array_ops.fill(array_ops.shape(y_pred), float("-inf")))
        if self.class_id is not None:
            y_true = y_true[..., self.class_id]
            y_pred = y_pred[..., self.class_id]
        labels = math_ops.not_equal(math_ops.cast(y_true, dtypes.float32), 0.0)
        labels = array_ops.reshape(_broadcast_bool(labels, y_pred), [1, -1])
        weights = array_ops.reshape(
            broadcast_weights(sample_weight, y_pred) if sample_weight is not None
            else array_ops.ones_like(y_pred), [1, -1])
        scores = array_ops.reshape(y_pred, [1, -1])
        above = math_ops.greater(scores, array_ops.reshape(
            array_ops.constant(self.thresholds, dtypes.float32), [-1, 1]))
        masks = {"tp": math_ops.logical_and(above, labels),
                 "fp": math_ops.logical_and(above, math_ops.logical_not(labels)),
                 "tn": math_ops.logical_and(math_ops.logical_not(above),
                                            math_ops.logical_not(labels)),
                 "fn": math_ops.logical_and(math_ops.logical_not(above), labels)}
        updates = [self._assign_add(self._state[c], math_ops.reduce_sum(
            math_ops.cast(masks[c], weights.dtype) * weights, axis=1)) for c in self.counts]
        return control_flow_primitives.group(*updates)

    def _value(self, tensor):
        return tensor[0] if self.init_thresholds is None or not isinstance(
            self.init_thresholds, (list, tuple)) else tensor

    def get_config(self):
        return {"thresholds": self.init_thresholds, "name": self.name, "dtype": self.dtype}


def _broadcast_bool(labels, like):
    return math_ops.logical_and(labels, array_ops.ones_like(like, dtype=dtypes.bool_))


def _count_metric(key, doc):
    class CountMetric(_ConfusionCounts):
        counts = (key,)

        def __init__(self, thresholds=None, name=None, dtype=None):
            super().__init__(thresholds, name=name, dtype=dtype)

        def result(self):
            return self._value(array_ops.identity(self._state[key]))

    CountMetric.__doc__ = doc
    return CountMetric


TruePositives = _count_metric("tp", "The weighted number of true positives (per threshold).")
FalsePositives = _count_metric("fp", "The weighted number of false positives (per threshold).")
TrueNegatives = _count_metric("tn", "The weighted number of true negatives (per threshold).")
FalseNegatives = _count_metric("fn", "The weighted number of false negatives (per threshold).")
for _cls, _name in ((TruePositives, "TruePositives"), (FalsePositives, "FalsePositives"),
                    (TrueNegatives, "TrueNegatives"), (FalseNegatives, "FalseNegatives")):
    _cls.__name__ = _cls.__qualname__ = _name


class Precision(_ConfusionCounts):
    """tp / (tp + fp) at each threshold (0.5 by default); `top_k` keeps only the k best
    scores of each row, `class_id` looks at one class column."""

    counts = ("tp", "fp")

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(thresholds, top_k, class_id, name=name, dtype=dtype)

    def result(self):
        tp, fp = self._state["tp"], self._state["fp"]
        return self._value(math_ops.div_no_nan(tp, tp + fp))

    def get_config(self):
        return dict(super().get_config(), top_k=self.top_k, class_id=self.class_id)


class Recall(Precision):
    """tp / (tp + fn) at each threshold (0.5 by default); `top_k` and `class_id` as in
    Precision."""

    counts = ("tp", "fn")

    def result(self):
        tp, fn = self._state["tp"], self._state["fn"]
        return self._value(math_ops.div_no_nan(tp, tp + fn))


class AUC(_ConfusionCounts):
    """The area under the ROC or PR curve, from confusion counts at `num_thresholds`
    thresholds spread evenly over [0, 1] (plus -eps and 1 + eps at the ends).

    Args:
        num_thresholds: more than 1.
        curve: 'ROC' or 'PR'.
        summation_method: 'interpolation' (trapezoids; for PR, the Davis & Goadrich
            interpolation), 'minoring' or 'majoring' (left or right Riemann sums of the
            lower/upper heights).
        thresholds: explicit thresholds in [0, 1] instead of `num_thresholds`.
    """

    counts = ("tp", "fp", "tn", "fn")

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation",
                 name=None, thresholds=None, dtype=None):
        curve, summation_method = str(curve).upper(), str(summation_method).lower()
        if curve not in ("ROC", "PR"):
            raise ValueError(f'Invalid AUC curve value "{curve}". Expected "ROC" or "PR".')
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f'Invalid AUC summation method value "{summation_method}".')
        if thresholds is not None:
            inner = sorted(_thresholds(thresholds))
            num_thresholds = len(inner) + 2
        else:
            if num_thresholds <= 1:
                raise ValueError("`num_thresholds` must be > 1.")
            step = 1.0 / (num_thresholds - 1)
            inner = [(i + 1) * step for i in range(num_thresholds - 2)]
        self.num_thresholds, self.curve = num_thresholds, curve
        self.summation_method = summation_method
        self._init = thresholds
        super().__init__([0.0] + inner + [1.0], name=name, dtype=dtype)
        self.thresholds = [-_EPSILON] + inner + [1.0 + _EPSILON]
        self.init_thresholds = None

    def _interpolated_pr(self):
        tp, fp, fn = self._state["tp"], self._state["fp"], self._state["fn"]
        n = self.num_thresholds
        d_tp = tp[: n - 1] - tp[1:]
        predicted = tp + fp
        d_predicted = predicted[: n - 1] - predicted[1:]
        slope = math_ops.div_no_nan(d_tp, math_ops.maximum(d_predicted, 0.0))
        intercept = tp[1:] - slope * predicted[1:]
        both = math_ops.logical_and(math_ops.greater(predicted[: n - 1], 0.0),
                                    math_ops.greater(predicted[1:], 0.0))
        ratio = array_ops.where(both, math_ops.div_no_nan(
            predicted[: n - 1], math_ops.maximum(predicted[1:], 0.0)),
            array_ops.ones_like(predicted[1:]))
        area = math_ops.div_no_nan(slope * (d_tp + intercept * math_ops.log(ratio)),
                                   math_ops.maximum(tp[1:] + fn[1:], 0.0))
        return math_ops.reduce_sum(area)

    def result(self):
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._interpolated_pr()
        tp, fp, tn, fn = (self._state[c] for c in ("tp", "fp", "tn", "fn"))
        n = self.num_thresholds
        recall = math_ops.div_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = math_ops.div_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, math_ops.div_no_nan(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[: n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = math_ops.minimum(y[: n - 1], y[1:])
        else:
            heights = math_ops.maximum(y[: n - 1], y[1:])
        return math_ops.reduce_sum((x[: n - 1] - x[1:]) * heights)

    def get_config(self):
        return {"num_thresholds": self.num_thresholds, "curve": self.curve,
                "summation_method": self.summation_method, "thresholds": self._init,
                "name": self.name, "dtype": self.dtype}


class _RateAtRate(_ConfusionCounts):
    """One rate read at the threshold where another rate is closest to `value` (TF 1.15's
    SensitivitySpecificityBase: `num_thresholds` thresholds spread over [0, 1])."""

    counts = ("tp", "fp", "tn", "fn")
    _given = "value"

    def __init__(self, value, num_thresholds=200, name=None, dtype=None):
        if num_thresholds <= 0:
            raise ValueError("`num_thresholds` must be > 0.")
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"`{self._given}` must be in the range [0, 1].")
        self.value, self.num_thresholds = value, num_thresholds
        if num_thresholds == 1:
            thresholds = [0.5]
        else:
            step = 1.0 / (num_thresholds - 1)
            thresholds = [0.0] + [(i + 1) * step for i in range(num_thresholds - 2)] + [1.0]
        super().__init__(thresholds, name=name, dtype=dtype)
        self.init_thresholds = None

    def _rates(self):
        tp, fp, tn, fn = (self._state[c] for c in ("tp", "fp", "tn", "fn"))
        return math_ops.div_no_nan(tp, tp + fn), math_ops.div_no_nan(tn, tn + fp)

    def _read(self, known, wanted):
        index = math_ops.cast(math_ops.argmin(math_ops.abs(known - self.value), axis=0),
                              dtypes.int32)
        return array_ops.gather(wanted, index)

    def get_config(self):
        return {self._given: self.value, "num_thresholds": self.num_thresholds,
                "name": self.name, "dtype": self.dtype}


class SensitivityAtSpecificity(_RateAtRate):
    """The sensitivity (recall) at the threshold whose specificity is closest to
    `specificity`."""

    _given = "specificity"

    def __init__(self, specificity, num_thresholds=200, name=None, dtype=None):
        super().__init__(specificity, num_thresholds, name=name, dtype=dtype)

    def result(self):
        sensitivity, specificity = self._rates()
        return self._read(specificity, sensitivity)


class SpecificityAtSensitivity(_RateAtRate):
    """The specificity at the threshold whose sensitivity is closest to `sensitivity`."""

    _given = "sensitivity"

    def __init__(self, sensitivity, num_thresholds=200, name=None, dtype=None):
        super().__init__(sensitivity, num_thresholds, name=name, dtype=dtype)

    def result(self):
        sensitivity, specificity = self._rates()
        return self._read(sensitivity, specificity)


class MeanIoU(Metric):
    """The mean over classes of intersection / union (tp / (tp + fp + fn)) from a weighted
    [num_classes, num_classes] confusion matrix (rows: labels, columns: predictions) of
    integer class ids; classes never seen are left out of the mean."""

    def __init__(self, num_classes, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.num_classes = int(num_classes)
        self.total_cm = self.add_weight("total_confusion_matrix",
                                        (self.num_classes, self.num_classes), dtype="float64")

    def update_state(self, y_true, y_pred, sample_weight=None):
        labels = math_ops.cast(array_ops.reshape(y_true, [-1]), dtypes.int64)
        predictions = math_ops.cast(array_ops.reshape(y_pred, [-1]), dtypes.int64)
        weights = (array_ops.reshape(math_ops.cast(sample_weight, dtypes.float64), [-1])
                   if sample_weight is not None
                   else array_ops.ones_like(labels, dtype=dtypes.float64))
        weights = weights * array_ops.ones_like(labels, dtype=dtypes.float64)
        cells = labels * self.num_classes + predictions
        counts = math_ops.unsorted_segment_sum(weights, cells,
                                               self.num_classes * self.num_classes)
        return self._assign_add(self.total_cm, array_ops.reshape(
            counts, [self.num_classes, self.num_classes]))

    def result(self):
        matrix = self.total_cm
        rows = math_ops.reduce_sum(matrix, axis=0)
        cols = math_ops.reduce_sum(matrix, axis=1)
        hits = array_ops.matrix_diag_part(matrix)
        union = rows + cols - hits
        present = math_ops.reduce_sum(math_ops.cast(math_ops.not_equal(union, 0.0),
                                                    dtypes.float64))
        iou = math_ops.div_no_nan(hits, union)
        return math_ops.cast(math_ops.div_no_nan(math_ops.reduce_sum(iou), present),
                             self.dtype)

    def get_config(self):
        return {"num_classes": self.num_classes, "name": self.name, "dtype": self.dtype}
