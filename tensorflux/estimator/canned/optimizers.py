"""The optimizers canned estimators accept: a name, an Optimizer, or a callable making one."""

from __future__ import annotations

from tensorflux.train import optimizers
from tensorflux.train.optimizer import Optimizer

_OPTIMIZER_CLS_NAMES = {
    "Adagrad": optimizers.AdagradOptimizer,
    "Adam": optimizers.AdamOptimizer,
    "Ftrl": optimizers.FtrlOptimizer,
    "RMSProp": optimizers.RMSPropOptimizer,
    "SGD": optimizers.GradientDescentOptimizer,
}


def get_optimizer_instance(opt, learning_rate=None):
    """An Optimizer from `opt`: a name ('Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD', made
    with `learning_rate`), an Optimizer instance, or a callable returning one.

    Raises:
        ValueError: an unknown name, a name without learning_rate, or an object that is not
            (and does not make) an Optimizer.
    """
    if isinstance(opt, str):
        if opt not in _OPTIMIZER_CLS_NAMES:
            raise ValueError(f"Unsupported optimizer name: {opt}. Supported names are: "
                             f"{tuple(sorted(_OPTIMIZER_CLS_NAMES))}")
        if learning_rate is None:
            raise ValueError("learning_rate must be specified when opt is string.")
        return _OPTIMIZER_CLS_NAMES[opt](learning_rate=learning_rate)
    if callable(opt) and not isinstance(opt, Optimizer):
        opt = opt()
    if not isinstance(opt, Optimizer):
        raise ValueError(f"The given object is not an Optimizer instance. Given: {opt}")
    return opt
