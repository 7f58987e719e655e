"""`tf.keras.optimizers.schedules` and the decay schedules of `tf.keras.experimental`:
learning rates as functions of the optimizer's step (`schedule(step)` builds the graph ops of
the matching `tf.train.*_decay`). A Keras optimizer given one evaluates it at its own
`iterations` counter."""

from __future__ import annotations

from tensorflux.train import learning_rate_decay as decay

__all__ = ["LearningRateSchedule", "ExponentialDecay", "PiecewiseConstantDecay",
           "PolynomialDecay", "InverseTimeDecay", "CosineDecay", "CosineDecayRestarts",
           "LinearCosineDecay", "NoisyLinearCosineDecay", "serialize", "deserialize"]


class LearningRateSchedule:
    """Base class: `__call__(step)` returns the learning rate at `step` (a tensor)."""

    def __call__(self, step):
        raise NotImplementedError(f"{type(self).__name__} does not define __call__")

    def get_config(self):
        raise NotImplementedError(f"{type(self).__name__} does not define get_config")

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _schedule(class_name, function, params, doc):
    """A schedule class calling `function(*params..., global_step=step)`."""

    def __init__(self, *args, **kwargs):
        names = list(params) + ["name"]
        if len(args) > len(names):
            raise TypeError(f"{class_name} takes at most {len(names)} arguments")
        values = dict(params)
        values["name"] = None
        for key, value in zip(names, args):
            values[key] = value
        for key, value in kwargs.items():
            if key not in values:
                raise TypeError(f"{class_name} got an unexpected keyword argument {key!r}")
            values[key] = value
        missing = [k for k, v in values.items() if v is _REQUIRED]
        if missing:
            raise TypeError(f"{class_name} is missing required arguments: {missing}")
        self._values = values

    def __call__(self, step):
        values = dict(self._values)
        name = values.pop("name")
        first = next(iter(params))
        rest = {k: v for k, v in values.items() if k != first}
        return function(values[first], step, name=name or class_name, **rest)

    def get_config(self):
        return dict(self._values)

    def __getattr__(self, key):
        values = self.__dict__.get("_values", {})
        if key in values:
            return values[key]
        raise AttributeError(key)

    cls = type(class_name, (LearningRateSchedule,),
               {"__init__": __init__, "__call__": __call__, "get_config": get_config,
                "__getattr__": __getattr__, "__doc__": doc})
    return cls


_REQUIRED = object()

ExponentialDecay = _schedule(
    "ExponentialDecay", decay.exponential_decay,
    {"initial_learning_rate": _REQUIRED, "decay_steps": _REQUIRED, "decay_rate": _REQUIRED,
     "staircase": False},
    "initial_learning_rate * decay_rate ^ (step / decay_steps), floored with `staircase`.")
InverseTimeDecay = _schedule(
    "InverseTimeDecay", decay.inverse_time_decay,
    {"initial_learning_rate": _REQUIRED, "decay_steps": _REQUIRED, "decay_rate": _REQUIRED,
     "staircase": False},
    "initial_learning_rate / (1 + decay_rate * step / decay_steps).")
PolynomialDecay = _schedule(
    "PolynomialDecay", decay.polynomial_decay,
    {"initial_learning_rate": _REQUIRED, "decay_steps": _REQUIRED,
     "end_learning_rate": 0.0001, "power": 1.0, "cycle": False},
    "A polynomial decay from initial_learning_rate to end_learning_rate over decay_steps.")
CosineDecay = _schedule(
    "CosineDecay", decay.cosine_decay,
    {"initial_learning_rate": _REQUIRED, "decay_steps": _REQUIRED, "alpha": 0.0},
    "Cosine decay to alpha * initial_learning_rate over decay_steps.")
CosineDecayRestarts = _schedule(
    "CosineDecayRestarts", decay.cosine_decay_restarts,
    {"initial_learning_rate": _REQUIRED, "first_decay_steps": _REQUIRED, "t_mul": 2.0,
     "m_mul": 1.0, "alpha": 0.0},
    "Cosine decay with warm restarts (SGDR).")
LinearCosineDecay = _schedule(
    "LinearCosineDecay", decay.linear_cosine_decay,
    {"initial_learning_rate": _REQUIRED, "decay_steps": _REQUIRED, "num_periods": 0.5,
     "alpha": 0.0, "beta": 0.001},
    "Linear cosine decay (Bello et al., 2017).")
NoisyLinearCosineDecay = _schedule(
    "NoisyLinearCosineDecay", decay.noisy_linear_cosine_decay,
    {"initial_learning_rate": _REQUIRED, "decay_steps": _REQUIRED, "initial_variance": 1.0,
     "variance_decay": 0.55, "num_periods": 0.5, "alpha": 0.0, "beta": 0.001},
    "Linear cosine decay with decaying Gaussian noise.")


class PiecewiseConstantDecay(LearningRateSchedule):
    """`values[i]` between `boundaries[i - 1]` and `boundaries[i]`.

    Raises:
        ValueError: `values` is not one longer than `boundaries`.
    """

    def __init__(self, boundaries, values, name=None):
        if len(boundaries) != len(values) - 1:
            raise ValueError("The length of boundaries should be 1 less than the length of "
                             "values")
        self.boundaries, self.values, self.name = list(boundaries), list(values), name

    def __call__(self, step):
        return decay.piecewise_constant(step, self.boundaries, self.values,
                                        name=self.name or "PiecewiseConstant")

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


_CLASSES = {cls.__name__: cls for cls in (
    ExponentialDecay, InverseTimeDecay, PolynomialDecay, PiecewiseConstantDecay, CosineDecay,
    CosineDecayRestarts, LinearCosineDecay, NoisyLinearCosineDecay)}


def serialize(learning_rate_schedule):
    """`{"class_name", "config"}` of a schedule."""
    return {"class_name": type(learning_rate_schedule).__name__,
            "config": learning_rate_schedule.get_config()}


def deserialize(config, custom_objects=None):
    """The schedule `serialize` described.

    Raises:
        ValueError: an unknown class name.
    """
    classes = dict(_CLASSES)
    classes.update(custom_objects or {})
    cls = classes.get(config.get("class_name"))
    if cls is None:
        raise ValueError(f"Unknown decay: {config.get('class_name')}")
    return cls.from_config(dict(config["config"]))
