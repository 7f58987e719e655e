"""`...learn.estimators.model_fn` (alias): ModelFnOps and ModeKeys."""

from tensorflux.contrib.learn.estimator import ModeKeys, ModelFnOps

__all__ = ["ModeKeys", "ModelFnOps"]
