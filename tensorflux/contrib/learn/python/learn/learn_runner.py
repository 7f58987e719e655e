"""`tensorflow.contrib.learn.python.learn.learn_runner` (alias)."""

from tensorflux.contrib.learn.learn_runner import run

__all__ = ["run"]
