"""Gradient-boosted trees estimators (TF 1.15 `tf.estimator.BoostedTrees*`)."""

from tensorflux.estimator.boosted_trees.estimators import (
    BoostedTreesClassifier,
    BoostedTreesRegressor,
    boosted_trees_classifier_train_in_memory,
    boosted_trees_regressor_train_in_memory,
)

__all__ = ["BoostedTreesClassifier", "BoostedTreesRegressor",
           "boosted_trees_classifier_train_in_memory", "boosted_trees_regressor_train_in_memory"]
