"""`...learn.estimators.run_config` (alias): RunConfig."""

from tensorflux.contrib.learn.estimator import RunConfig

__all__ = ["RunConfig"]
