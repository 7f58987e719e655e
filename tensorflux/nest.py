"""`tf.nest`: nested structures (the one implementation lives in framework/nest.py)."""

from tensorflux.framework.nest import *  # noqa: F403
