"""Gradient-boosted trees estimators (TF 1.15 `tf.estimator.BoostedTrees*`)."""

from tensorflux.estimator.boosted_trees.estimators import (BoostedTreesClassifier,
                                                           BoostedTreesRegressor)

__all__ = ["BoostedTreesClassifier", "BoostedTreesRegressor"]
