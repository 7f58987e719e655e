"""contrib.learn's canned estimators (TF 1.0-1.4) over the `tf.estimator` canned models.

`DNNClassifier`, `DNNRegressor`, `LinearClassifier`, `LinearRegressor`,
`DNNLinearCombinedClassifier` and `DNNLinearCombinedRegressor` take contrib.learn's
constructor arguments (`weight_column_name`, `optimizer=None` for the default, `label_keys`,
`gradient_clip_norm`, `feature_engineering_fn`, ...) and build the core model of the same
name with contrib's loss: the weighted MEAN over the batch (core TF1 canned models use the
SUM). A features Tensor (an x array) is the feature "" (`real_valued_column("", ...)`).

Results use contrib's names: `evaluate` gives "loss", "accuracy", "global_step" (binary
classifiers also "auc", "auc_precision_recall", "accuracy/baseline_label_mean",
"accuracy/threshold_0.500000_mean", "labels/actual_label_mean", "labels/prediction_mean",
"precision/positive_threshold_0.500000_mean", "recall/positive_threshold_0.500000_mean");
classifiers predict class ids (`predict_classes`) or probabilities (`predict_proba`),
regressors scores (`predict_scores`). `enable_centered_bias` is accepted and ignored (the
logits layer has its own bias); `embedding_lr_multipliers` is not supported.
"""

from __future__ import annotations

import numpy as np

from tensorflux import losses as losses_lib
from tensorflux.contrib.estimator.delegating_optimizer import DelegatingOptimizer
from tensorflux.contrib.learn import estimator as learn_estimator
from tensorflux.estimator import canned as core_canned
from tensorflux.estimator.canned.linear import linear_learning_rate
from tensorflux.estimator.canned.optimizers import get_optimizer_instance
from tensorflux.ops import array as array_ops
from tensorflux.ops.math import clip as clip_ops
from tensorflux.ops.nn import activations

__all__ = ["DNNClassifier", "DNNRegressor", "LinearClassifier", "LinearRegressor",
           "DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor"]

_MEAN = losses_lib.Reduction.SUM_OVER_BATCH_SIZE
_DNN_LEARNING_RATE = 0.05
_BINARY_RENAMES = {
    "accuracy/baseline_label_mean": "label/mean",
    "accuracy/threshold_0.500000_mean": "accuracy",
    "labels/actual_label_mean": "label/mean",
    "labels/prediction_mean": "prediction/mean",
    "precision/positive_threshold_0.500000_mean": "precision",
    "recall/positive_threshold_0.500000_mean": "recall",
}


class _GlobalNormClipping(DelegatingOptimizer):
    """Clips the gradients by their global norm before `optimizer` applies them
    (contrib.learn's `gradient_clip_norm`)."""

    def __init__(self, optimizer, clip_norm):
        super().__init__(optimizer, "ClipByGlobalNorm")
        self._clip_norm = clip_norm

    def compute_gradients(self, *args, **kwargs):
        pairs = self._optimizer.compute_gradients(*args, **kwargs)
        kept = [(g, v) for g, v in pairs if g is not None]
        clipped, _ = clip_ops.clip_by_global_norm([g for g, _ in kept], self._clip_norm)
        return [(g, v) for g, (_, v) in zip(clipped, kept)]


def _optimizer(optimizer, default_name, learning_rate, gradient_clip_norm):
    optimizer = default_name if optimizer is None else optimizer
    if gradient_clip_norm is None:
        return optimizer
    if gradient_clip_norm <= 0:
        raise ValueError(f"gradient_clip_norm must be positive; got {gradient_clip_norm}")

    def make():
        return _GlobalNormClipping(get_optimizer_instance(optimizer, learning_rate),
                                   gradient_clip_norm)

    return make


def _check_unsupported(embedding_lr_multipliers):
    if embedding_lr_multipliers:
        raise ValueError("embedding_lr_multipliers is not supported by tensorflux.")


class _Canned(learn_estimator.BaseEstimator):
    """A contrib.learn estimator whose model is the core canned estimator `make_core()`."""

    _is_classifier = False

    def __init__(self, model_dir, config, feature_engineering_fn, make_core):
        super().__init__(model_dir=model_dir, config=config)
        self._feature_engineering_fn = feature_engineering_fn
        self._core = make_core(self.model_dir, self._estimator.config)
        self._core_model_fn = self._core.model_fn

    def _core_spec(self, features, labels, mode, config):
        if self._feature_engineering_fn is not None:
            features, labels = self._feature_engineering_fn(features, labels)
        if not isinstance(features, dict):
            features = {"": features}
        return self._core_model_fn(features, labels, mode, config)


class _Classifier(_Canned):
    def __init__(self, n_classes, label_keys, *args):
        self._n_classes = n_classes
        self._label_keys = label_keys
        super().__init__(*args)

    _default_prediction_key = "classes"

    def _metric_predictions(self, predictions):
        out = {"classes": array_ops.squeeze(predictions["class_ids"], [1]),
               "probabilities": predictions["probabilities"], "logits": predictions["logits"]}
        if "logistic" in predictions:
            out["logistic"] = predictions["logistic"]
        return out

    def _rename_results(self, results, user_keys):
        keep = {"loss", "global_step", "accuracy", "auc", "auc_precision_recall"} | user_keys
        renamed = {key: value for key, value in results.items() if key in keep}
        if self._n_classes == 2:
            renamed.update({new: results[old] for new, old in _BINARY_RENAMES.items()
                            if old in results})
        return renamed

    def _predict_iter(self, x, input_fn, batch_size, predict_keys):
        keys = ["classes", "probabilities", "logits"] if predict_keys is None else (
            [predict_keys] if isinstance(predict_keys, str) else list(predict_keys))
        unknown = set(keys) - {"classes", "probabilities", "logits"}
        if unknown:
            raise ValueError(f"outputs {sorted(unknown)} are not predicted; the classifier "
                             f"predicts 'classes', 'probabilities' and 'logits'.")
        core_keys = ["classes" if self._label_keys else "class_ids", "probabilities", "logits"]
        for item in super()._predict_iter(x, input_fn, batch_size, core_keys):
            out = {"classes": item[core_keys[0]][0], "probabilities": item["probabilities"],
                   "logits": item["logits"]}
            if self._label_keys:
                out["classes"] = out["classes"].decode()
            yield {key: out[key] for key in keys}

    def predict(self, x=None, input_fn=None, batch_size=None, outputs=None, as_iterable=True):
        """Class ids (class names with `label_keys`), or dicts of `outputs` ("classes",
        "probabilities", "logits")."""
        if outputs is None:
            return self.predict_classes(x, input_fn, batch_size, as_iterable)
        return super().predict(x, input_fn, batch_size, outputs, as_iterable)

    def predict_classes(self, x=None, input_fn=None, batch_size=None, as_iterable=True):
        """The predicted class of each example."""
        values = (item["classes"] for item in self._predict_iter(x, input_fn, batch_size,
                                                                   "classes"))
        return values if as_iterable else np.asarray(list(values))

    def predict_proba(self, x=None, input_fn=None, batch_size=None, as_iterable=True):
        """The class probabilities `[n_classes]` of each example."""
        values = (item["probabilities"] for item in self._predict_iter(x, input_fn, batch_size,
                                                                         "probabilities"))
        return values if as_iterable else np.stack(list(values))


class _Regressor(_Canned):
    def __init__(self, label_dimension, *args):
        self._label_dimension = label_dimension
        super().__init__(*args)

    _default_prediction_key = "scores"

    def _metric_predictions(self, predictions):
        scores = predictions["predictions"]
        if self._label_dimension == 1:
            scores = array_ops.squeeze(scores, [1])
        return {"scores": scores}

    def _rename_results(self, results, user_keys):
        keep = {"loss", "global_step"} | user_keys
        return {key: value for key, value in results.items() if key in keep}

    def _predict_iter(self, x, input_fn, batch_size, predict_keys):
        keys = ["scores"] if predict_keys is None else (
            [predict_keys] if isinstance(predict_keys, str) else list(predict_keys))
        if set(keys) - {"scores"}:
            raise ValueError(f"outputs {keys}: the regressor predicts only 'scores'.")
        for item in super()._predict_iter(x, input_fn, batch_size, ["predictions"]):
            scores = item["predictions"]
            yield {"scores": scores[0] if self._label_dimension == 1 else scores}

    def predict(self, x=None, input_fn=None, batch_size=None, outputs=None, as_iterable=True):
        """Scores (the regression values), or dicts {"scores": ...} when `outputs` given."""
        if outputs is None:
            return self.predict_scores(x, input_fn, batch_size, as_iterable)
        return super().predict(x, input_fn, batch_size, outputs, as_iterable)

    def predict_scores(self, x=None, input_fn=None, batch_size=None, as_iterable=True):
        """The predicted value(s) of each example."""
        values = (item["scores"] for item in self._predict_iter(x, input_fn, batch_size, None))
        return values if as_iterable else np.asarray(list(values))


class DNNClassifier(_Classifier):
    """A feed-forward classifier (contrib.learn, TF 1.x arguments).

    Raises:
        ValueError: empty hidden_units or feature_columns, n_classes < 2, a bad optimizer or
            gradient_clip_norm, embedding_lr_multipliers.
    """

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2,
                 weight_column_name=None, optimizer=None, activation_fn=activations.relu,
                 dropout=None, gradient_clip_norm=None, enable_centered_bias=False,
                 config=None, feature_engineering_fn=None, embedding_lr_multipliers=None,
                 input_layer_min_slice_size=None, label_keys=None):
        del enable_centered_bias, input_layer_min_slice_size
        _check_unsupported(embedding_lr_multipliers)
        opt = _optimizer(optimizer, "Adagrad", _DNN_LEARNING_RATE, gradient_clip_norm)

        def make_core(model_dir_, config_):
            return core_canned.DNNClassifier(
                hidden_units, feature_columns, model_dir=model_dir_, n_classes=n_classes,
                weight_column=weight_column_name, label_vocabulary=label_keys, optimizer=opt,
                activation_fn=activation_fn, dropout=dropout, config=config_,
                loss_reduction=_MEAN)

        super().__init__(n_classes, label_keys, model_dir, config, feature_engineering_fn,
                         make_core)


class DNNRegressor(_Regressor):
    """A feed-forward regressor (contrib.learn, TF 1.x arguments).

    Raises:
        ValueError: empty hidden_units or feature_columns, label_dimension < 1, a bad
            optimizer or gradient_clip_norm, embedding_lr_multipliers.
    """

    def __init__(self, hidden_units, feature_columns, model_dir=None, weight_column_name=None,
                 optimizer=None, activation_fn=activations.relu, dropout=None,
                 gradient_clip_norm=None, enable_centered_bias=False, config=None,
                 feature_engineering_fn=None, label_dimension=1,
                 embedding_lr_multipliers=None, input_layer_min_slice_size=None):
        del enable_centered_bias, input_layer_min_slice_size
        _check_unsupported(embedding_lr_multipliers)
        opt = _optimizer(optimizer, "Adagrad", _DNN_LEARNING_RATE, gradient_clip_norm)

        def make_core(model_dir_, config_):
            return core_canned.DNNRegressor(
                hidden_units, feature_columns, model_dir=model_dir_,
                label_dimension=label_dimension, weight_column=weight_column_name,
                optimizer=opt, activation_fn=activation_fn, dropout=dropout, config=config_,
                loss_reduction=_MEAN)

        super().__init__(label_dimension, model_dir, config, feature_engineering_fn, make_core)


class LinearClassifier(_Classifier):
    """A linear classifier (contrib.learn, TF 1.x arguments; FTRL by default).

    Raises:
        ValueError: empty feature_columns, n_classes < 2, a bad optimizer or
            gradient_clip_norm.
    """

    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column_name=None,
                 optimizer=None, gradient_clip_norm=None, enable_centered_bias=False,
                 _joint_weight=False, config=None, feature_engineering_fn=None,
                 label_keys=None):
        del enable_centered_bias, _joint_weight
        columns = tuple(feature_columns or ())
        opt = _optimizer(optimizer, "Ftrl", linear_learning_rate(max(len(columns), 1)),
                         gradient_clip_norm)

        def make_core(model_dir_, config_):
            return core_canned.LinearClassifier(
                columns, model_dir=model_dir_, n_classes=n_classes,
                weight_column=weight_column_name, label_vocabulary=label_keys, optimizer=opt,
                config=config_, loss_reduction=_MEAN)

        super().__init__(n_classes, label_keys, model_dir, config, feature_engineering_fn,
                         make_core)


class LinearRegressor(_Regressor):
    """A linear regressor (contrib.learn, TF 1.x arguments; FTRL by default).

    Raises:
        ValueError: empty feature_columns, label_dimension < 1, a bad optimizer or
            gradient_clip_norm.
    """

    def __init__(self, feature_columns, model_dir=None, weight_column_name=None,
                 optimizer=None, gradient_clip_norm=None, enable_centered_bias=False,
                 label_dimension=1, _joint_weights=False, config=None,
                 feature_engineering_fn=None):
        del enable_centered_bias, _joint_weights
        columns = tuple(feature_columns or ())
        opt = _optimizer(optimizer, "Ftrl", linear_learning_rate(max(len(columns), 1)),
                         gradient_clip_norm)

        def make_core(model_dir_, config_):
            return core_canned.LinearRegressor(
                columns, model_dir=model_dir_, label_dimension=label_dimension,
                weight_column=weight_column_name, optimizer=opt, config=config_,
                loss_reduction=_MEAN)

        super().__init__(label_dimension, model_dir, config, feature_engineering_fn, make_core)


def _combined_optimizers(linear_feature_columns, linear_optimizer, dnn_optimizer,
                         gradient_clip_norm):
    linear_rate = linear_learning_rate(max(len(tuple(linear_feature_columns or ())), 1))
    return (_optimizer(linear_optimizer, "Ftrl", linear_rate, gradient_clip_norm),
            _optimizer(dnn_optimizer, "Adagrad", _DNN_LEARNING_RATE, gradient_clip_norm))


class DNNLinearCombinedClassifier(_Classifier):
    """A wide & deep classifier (contrib.learn, TF 1.x arguments).

    Raises:
        ValueError: no feature columns at all, deep columns without hidden units,
            n_classes < 2, a bad optimizer or gradient_clip_norm, embedding_lr_multipliers.
    """

    def __init__(self, model_dir=None, n_classes=2, weight_column_name=None,
                 linear_feature_columns=None, linear_optimizer=None,
                 _joint_linear_weights=False, dnn_feature_columns=None, dnn_optimizer=None,
                 dnn_hidden_units=None, dnn_activation_fn=activations.relu, dnn_dropout=None,
                 gradient_clip_norm=None, enable_centered_bias=False, config=None,
                 feature_engineering_fn=None, embedding_lr_multipliers=None,
                 input_layer_min_slice_size=None, label_keys=None,
                 fix_global_step_increment_bug=False):
        del (_joint_linear_weights, enable_centered_bias, input_layer_min_slice_size,
             fix_global_step_increment_bug)
        _check_unsupported(embedding_lr_multipliers)
        linear_opt, dnn_opt = _combined_optimizers(linear_feature_columns, linear_optimizer,
                                                   dnn_optimizer, gradient_clip_norm)

        def make_core(model_dir_, config_):
            return core_canned.DNNLinearCombinedClassifier(
                model_dir=model_dir_, linear_feature_columns=linear_feature_columns,
                linear_optimizer=linear_opt, dnn_feature_columns=dnn_feature_columns,
                dnn_optimizer=dnn_opt, dnn_hidden_units=dnn_hidden_units,
                dnn_activation_fn=dnn_activation_fn, dnn_dropout=dnn_dropout,
                n_classes=n_classes, weight_column=weight_column_name,
                label_vocabulary=label_keys, config=config_, loss_reduction=_MEAN)

        super().__init__(n_classes, label_keys, model_dir, config, feature_engineering_fn,
                         make_core)


class DNNLinearCombinedRegressor(_Regressor):
    """A wide & deep regressor (contrib.learn, TF 1.x arguments).

    Raises:
        ValueError: no feature columns at all, deep columns without hidden units,
            label_dimension < 1, a bad optimizer or gradient_clip_norm.
    """

    def __init__(self, model_dir=None, weight_column_name=None, linear_feature_columns=None,
                 linear_optimizer=None, _joint_linear_weights=False, dnn_feature_columns=None,
                 dnn_optimizer=None, dnn_hidden_units=None, dnn_activation_fn=activations.relu,
                 dnn_dropout=None, gradient_clip_norm=None, enable_centered_bias=False,
                 label_dimension=1, config=None, feature_engineering_fn=None,
                 embedding_lr_multipliers=None, input_layer_min_slice_size=None,
                 fix_global_step_increment_bug=False):
        del (_joint_linear_weights, enable_centered_bias, input_layer_min_slice_size,
             fix_global_step_increment_bug)
        _check_unsupported(embedding_lr_multipliers)
        linear_opt, dnn_opt = _combined_optimizers(linear_feature_columns, linear_optimizer,
                                                   dnn_optimizer, gradient_clip_norm)

        def make_core(model_dir_, config_):
            return core_canned.DNNLinearCombinedRegressor(
                model_dir=model_dir_, linear_feature_columns=linear_feature_columns,
                linear_optimizer=linear_opt, dnn_feature_columns=dnn_feature_columns,
                dnn_optimizer=dnn_opt, dnn_hidden_units=dnn_hidden_units,
                dnn_activation_fn=dnn_activation_fn, dnn_dropout=dnn_dropout,
                label_dimension=label_dimension, weight_column=weight_column_name,
                config=config_, loss_reduction=_MEAN)

        super().__init__(label_dimension, model_dir, config, feature_engineering_fn, make_core)
