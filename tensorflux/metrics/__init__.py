"""`tf.metrics`: streaming metrics as (value, update_op) pairs over local variables."""

from tensorflux.metrics import at_k, confusion, core, regression
from tensorflux.metrics.at_k import *  # noqa: F403
from tensorflux.metrics.area_under_curve import auc
from tensorflux.metrics.confusion import *  # noqa: F403
from tensorflux.metrics.core import *  # noqa: F403
from tensorflux.metrics.regression import *  # noqa: F403

__all__ = core.__all__ + ["auc"] + at_k.__all__ + confusion.__all__ + regression.__all__
