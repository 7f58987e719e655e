"""`tf.estimator.BoostedTreesClassifier` and `BoostedTreesRegressor` (TF 1.15).

Gradient-boosted trees over bucketized, indicator and numeric feature columns (numeric ones
bucketized at learned quantiles), grown one layer per
`n_batches_per_layer` batches (see `model.py` and `ops/boosted_trees/growing.py`); training
stops by itself once `n_trees` trees are finished. Heads: sigmoid / softmax cross entropy or
mean squared error, averaged over the batch (SUM_OVER_BATCH_SIZE, as TF's boosted trees).
"""

from __future__ import annotations

from tensorflux import losses as losses_lib
from tensorflux.data import dataset_ops
from tensorflux.estimator.boosted_trees import features as features_lib
from tensorflux.estimator.boosted_trees import model as model_lib
from tensorflux.estimator.canned import head as head_lib
from tensorflux.estimator.estimator import Estimator

__all__ = ["BoostedTreesClassifier", "BoostedTreesRegressor",
           "boosted_trees_classifier_train_in_memory", "boosted_trees_regressor_train_in_memory"]


class _BoostedTrees(Estimator):
    """The shared constructor and the experimental_* methods."""

    def __init__(self, head, feature_columns, n_batches_per_layer, model_dir, config, hparams,
                 train_in_memory):
        self._columns = features_lib.check_columns(feature_columns)
        model_lib.check_hparams(n_batches_per_layer, hparams)
        if train_in_memory and n_batches_per_layer != 1:
            raise ValueError("train_in_memory requires n_batches_per_layer == 1 (the whole "
                             "data set is one batch).")
        self._head = head
        self._train_in_memory = bool(train_in_memory)
        self._hparams = hparams
        self._n_batches_per_layer = n_batches_per_layer
        self._layout = features_lib.layout(self._columns, model_lib.num_quantiles(hparams))

        def _model_fn(features, labels, mode, config):
            return model_lib.boosted_trees_model_fn(features, labels, mode, head,
                                                    self._columns, hparams,
                                                    n_batches_per_layer)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config)

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """As Estimator.train; with train_in_memory, the first element of input_fn's Dataset
        (the whole data set) is the batch of every step."""
        if self._train_in_memory:
            input_fn = self._in_memory_input_fn(input_fn)
        return super().train(input_fn, hooks=hooks, steps=steps, max_steps=max_steps,
                             saving_listeners=saving_listeners)

    def _in_memory_input_fn(self, input_fn):
        def in_memory_input_fn(mode):
            result = self._call_input_fn(input_fn, mode)
            if isinstance(result, dataset_ops.Dataset):
                result = result.take(1).repeat()
            return result

        return in_memory_input_fn

    def experimental_feature_importances(self, normalize=False):
        """Gain-based feature importances: {column name: summed split gains}, sorted in
        decreasing order (over the latest checkpoint).

        Raises:
            ValueError: no checkpoint; normalize on an ensemble with no split.
        """
        split_feature = self.get_variable_value("boosted_trees/tree_split_feature")
        gains = self.get_variable_value("boosted_trees/tree_gains")
        return model_lib.feature_importances(split_feature, gains, self._layout, normalize)

    def _explain_link(self):
        if self._head.logits_dimension != 1:
            raise ValueError("experimental_predict_with_explanations does not yet support "
                             "multi-class classification and multi-label regression.")
        return "identity" if isinstance(self._head, head_lib.RegressionHead) else "sigmoid"

    def experimental_predict_with_explanations(self, input_fn, predict_keys=None, hooks=None,
                                               checkpoint_path=None):
        """Like `predict`, each example also giving "bias" (the prediction before any split:
        the bias logit, or its probability for a classifier) and "dfc" (an OrderedDict of
        each column's directional feature contribution, largest magnitude first); bias plus
        the contributions is the prediction ("predictions" or "probabilities"[1]).

        Raises:
            ValueError: a multi-class or multi-dimensional model.
        """
        link = self._explain_link()
        columns, head, hparams = self._columns, self._head, self._hparams
        n_batches = self._n_batches_per_layer

        def explain_model_fn(features, labels, mode):
            return model_lib.boosted_trees_model_fn(features, labels, mode, head, columns,
                                                    hparams, n_batches, explain=link)

        explainer = Estimator(explain_model_fn, model_dir=self.model_dir, config=self.config)
        keys = None
        if predict_keys is not None:
            keys = [predict_keys] if isinstance(predict_keys, str) else list(predict_keys)
            keys = sorted(set(keys) | {"bias", "dfc"})
        for example in explainer.predict(input_fn, predict_keys=keys, hooks=hooks,
                                         checkpoint_path=checkpoint_path):
            example = dict(example)
            example["bias"] = float(example["bias"])
            example["dfc"] = model_lib.contributions_by_column(example["dfc"], self._layout)
            yield example


def _hparams(n_trees, max_depth, learning_rate, l1_regularization, l2_regularization,
             tree_complexity, min_node_weight, center_bias, pruning_mode,
             quantile_sketch_epsilon):
    return model_lib.TreeHParams(n_trees, max_depth, learning_rate, l1_regularization,
                                 l2_regularization, tree_complexity, min_node_weight,
                                 center_bias, pruning_mode, quantile_sketch_epsilon)


class BoostedTreesClassifier(_BoostedTrees):
    """A gradient-boosted trees classifier.

    Args:
        feature_columns: bucketized_column, indicator_column or numeric_column columns.
        n_batches_per_layer: batches whose statistics make each layer.
        model_dir, config: as Estimator.
        n_classes: number of classes (2: one sigmoid logit; more: softmax logits).
        weight_column: a feature key (or numeric column) of example weights.
        label_vocabulary: string labels, in class order.
        n_trees, max_depth: the ensemble's size (a tree has at most max_depth levels of
            splits).
        learning_rate: shrinkage of each leaf's Newton step.
        l1_regularization, l2_regularization: on the leaf values.
        tree_complexity: the gain a split must exceed ("pre"/"post" pruning).
        min_node_weight: the hessian sum each child of a split needs.
        center_bias: first fit the bias by Newton steps.
        pruning_mode: "none", "pre" or "post".
        quantile_sketch_epsilon: numeric columns are bucketized at the 1 / epsilon quantiles
            of the first `n_batches_per_layer` batches (learned before the first tree).
        train_in_memory: the whole data set is one batch (n_batches_per_layer must be 1).

    Raises:
        ValueError: a column that is not bucketized / indicator / numeric; an argument out of
            range.

    Example:
        >>> est = tf.estimator.BoostedTreesClassifier(
        ...     [tf.feature_column.bucketized_column(age, [18, 30, 50])],
        ...     n_batches_per_layer=1, n_trees=50, max_depth=3)
        >>> est.train(input_fn, max_steps=100)
    """

    def __init__(self, feature_columns, n_batches_per_layer, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, n_trees=100, max_depth=6,
                 learning_rate=0.1, l1_regularization=0.0, l2_regularization=0.0,
                 tree_complexity=0.0, min_node_weight=0.0, config=None, center_bias=False,
                 pruning_mode="none", quantile_sketch_epsilon=0.01, train_in_memory=False):
        head = head_lib.ClassificationHead(
            n_classes, weight_column, label_vocabulary,
            losses_lib.Reduction.SUM_OVER_BATCH_SIZE)
        super().__init__(head, feature_columns, n_batches_per_layer, model_dir, config,
                         _hparams(n_trees, max_depth, learning_rate, l1_regularization,
                                  l2_regularization, tree_complexity, min_node_weight,
                                  center_bias, pruning_mode, quantile_sketch_epsilon),
                         train_in_memory)


class BoostedTreesRegressor(_BoostedTrees):
    """A gradient-boosted trees regressor (mean squared error); arguments as
    BoostedTreesClassifier, with `label_dimension` targets instead of classes.

    Raises:
        ValueError: a column that is not bucketized / indicator / numeric; an argument out of
            range.
    """

    def __init__(self, feature_columns, n_batches_per_layer, model_dir=None, label_dimension=1,
                 weight_column=None, n_trees=100, max_depth=6, learning_rate=0.1,
                 l1_regularization=0.0, l2_regularization=0.0, tree_complexity=0.0,
                 min_node_weight=0.0, config=None, center_bias=False, pruning_mode="none",
                 quantile_sketch_epsilon=0.01, train_in_memory=False):
        head = head_lib.RegressionHead(label_dimension, weight_column,
                                       losses_lib.Reduction.SUM_OVER_BATCH_SIZE)
        super().__init__(head, feature_columns, n_batches_per_layer, model_dir, config,
                         _hparams(n_trees, max_depth, learning_rate, l1_regularization,
                                  l2_regularization, tree_complexity, min_node_weight,
                                  center_bias, pruning_mode, quantile_sketch_epsilon),
                         train_in_memory)


def boosted_trees_classifier_train_in_memory(
        train_input_fn, feature_columns, model_dir=None, n_classes=2, weight_column=None,
        label_vocabulary=None, n_trees=100, max_depth=6, learning_rate=0.1,
        l1_regularization=0.0, l2_regularization=0.0, tree_complexity=0.0,
        min_node_weight=0.0, config=None, train_hooks=None, center_bias=False,
        pruning_mode="none", quantile_sketch_epsilon=0.01):
    """`tf.contrib.estimator.boosted_trees_classifier_train_in_memory`: a
    BoostedTreesClassifier (train_in_memory, one batch per layer) trained on the whole data
    set `train_input_fn` gives as its Dataset's first element, until all trees are grown.

    Returns:
        The trained BoostedTreesClassifier.
    """
    estimator = BoostedTreesClassifier(
        feature_columns, 1, model_dir=model_dir, n_classes=n_classes,
        weight_column=weight_column, label_vocabulary=label_vocabulary, n_trees=n_trees,
        max_depth=max_depth, learning_rate=learning_rate,
        l1_regularization=l1_regularization, l2_regularization=l2_regularization,
        tree_complexity=tree_complexity, min_node_weight=min_node_weight, config=config,
        center_bias=center_bias, pruning_mode=pruning_mode,
        quantile_sketch_epsilon=quantile_sketch_epsilon, train_in_memory=True)
    return estimator.train(train_input_fn, hooks=train_hooks)


def boosted_trees_regressor_train_in_memory(
        train_input_fn, feature_columns, model_dir=None, label_dimension=1,
        weight_column=None, n_trees=100, max_depth=6, learning_rate=0.1,
        l1_regularization=0.0, l2_regularization=0.0, tree_complexity=0.0,
        min_node_weight=0.0, config=None, train_hooks=None, center_bias=False,
        pruning_mode="none", quantile_sketch_epsilon=0.01):
    """`tf.contrib.estimator.boosted_trees_regressor_train_in_memory`: as the classifier's.

    Returns:
        The trained BoostedTreesRegressor.
    """
    estimator = BoostedTreesRegressor(
        feature_columns, 1, model_dir=model_dir, label_dimension=label_dimension,
        weight_column=weight_column, n_trees=n_trees, max_depth=max_depth,
        learning_rate=learning_rate, l1_regularization=l1_regularization,
        l2_regularization=l2_regularization, tree_complexity=tree_complexity,
        min_node_weight=min_node_weight, config=config, center_bias=center_bias,
        pruning_mode=pruning_mode, quantile_sketch_epsilon=quantile_sketch_epsilon,
        train_in_memory=True)
    return estimator.train(train_input_fn, hooks=train_hooks)
