"""`tf.keras.optimizers`: Keras-named optimizers running as TF1 `tf.train` optimizers.

Each class builds the matching `tf.train` optimizer (`SGD` -> GradientDescent or Momentum,
`Adam`, `RMSprop`, `Adagrad`, `Adadelta`, `Adamax`, `Nadam`, `Ftrl`) with the defaults of
TF 1.15's `tf.keras.optimizers`; `lr` is accepted for `learning_rate`.
"""

from __future__ import annotations

from tensorflux import train
from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph2
from tensorflux.keras import optimizer_schedules as schedules
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import variables as state_variables
from tensorflux.train.adam_variants import AdaMaxOptimizer, ScheduledNadamOptimizer

__all__ = ["Optimizer", "SGD", "Adam", "RMSprop", "Adagrad", "Adadelta", "Adamax", "Nadam",
           "Ftrl", "get", "schedules", "serialize", "deserialize"]


class Optimizer:
    """A Keras optimizer: hyper-parameters plus the `tf.train` optimizer that applies them.

    The learning rate lives in a non-trainable variable `lr` (`<name>/lr`, created in the
    graph where the optimizer is used), so `backend.set_value(optimizer.lr, value)` and the
    learning-rate callbacks change it between steps. A `tf.keras.optimizers.schedules`
    schedule as the learning rate is evaluated at `iterations`, the optimizer's step counter
    (`<name>/iter`, incremented by every update, as TF's Keras optimizers do).
    """

    def __init__(self, learning_rate, lr, name):
        value = lr if lr is not None else learning_rate
        if isinstance(value, schedules.LearningRateSchedule):
            self.learning_rate = value
        else:
            self.learning_rate = float(value)
        self._name = name
        self._lr = None
        self._iterations = None
        self._tf_optimizer = None

    @property
    def iterations(self):
        """The int64 count of updates applied in the default graph."""
        graph = graph2.get_default_graph()
        if self._iterations is None or self._iterations.graph is not graph:
            with graph.name_scope(None), graph.name_scope(self._name):
                self._iterations = state_variables.Variable(
                    0, trainable=False, name="iter", dtype=dtypes.int64)
        return self._iterations

    @property
    def lr(self):
        """The learning-rate variable of the default graph (a tensor for a schedule)."""
        graph = graph2.get_default_graph()
        if self._lr is None or self._lr.graph is not graph:
            if isinstance(self.learning_rate, schedules.LearningRateSchedule):
                with graph.name_scope(None), graph.name_scope(self._name):
                    self._lr = self.learning_rate(self.iterations)
            else:
                with graph.name_scope(None), graph.name_scope(self._name):
                    self._lr = state_variables.Variable(
                        self.learning_rate, trainable=False, name="lr", dtype=dtypes.float32
                    )
            self._tf_optimizer = None
        return self._lr

    @property
    def tf_optimizer(self):
        """The `tf.train` optimizer for the default graph, reading the `lr` variable."""
        lr = self.lr
        if self._tf_optimizer is None:
            self._tf_optimizer = self._make(lr)
        return self._tf_optimizer

    def minimize(self, loss, var_list=None, global_step=None):
        """The update op of `loss`'s gradients, which also counts `iterations`."""
        with loss.graph.as_default():
            graph = loss.graph
            update = self.tf_optimizer.minimize(loss, var_list=var_list, global_step=global_step)
            with graph.control_dependencies([update]):
                count = self.iterations.assign_add(1)
            return control_flow_ops.group(update, count)

    def get_updates(self, loss, params):
        return [self.minimize(loss, var_list=params)]

    # -- object-based checkpoints (tf.train.Checkpoint, save_weights) ----------------------

    def _current_tf_optimizer(self):
        graph = graph2.get_default_graph()
        if self._lr is None or self._lr.graph is not graph:
            return None
        return self._tf_optimizer

    @property
    def _checkpoint_dependencies(self):
        """"learning_rate" and the wrapped optimizer's non-slot variables (Adam's beta
        powers) of the default graph; the slots come through `get_slot`."""
        tf_optimizer = self._current_tf_optimizer()
        if tf_optimizer is None:
            return []
        deps = [("iter", self._iterations)] if self._iterations is not None else []
        if not isinstance(self.learning_rate, schedules.LearningRateSchedule):
            deps.append(("learning_rate", self._lr))
        graph = graph2.get_default_graph()
        deps += sorted((name, var) for (name, g), var in tf_optimizer._non_slot_dict.items()
                       if g is graph)
        return deps

    def get_slot_names(self):
        """The slot names of the wrapped `tf.train` optimizer ("m", "v", "momentum", ...)."""
        tf_optimizer = self._current_tf_optimizer()
        return tf_optimizer.get_slot_names() if tf_optimizer is not None else []

    def get_slot(self, var, name):
        """The `name` slot of `var`, or None."""
        tf_optimizer = self._current_tf_optimizer()
        return tf_optimizer.get_slot(var, name) if tf_optimizer is not None else None

    def get_config(self):
        """The constructor arguments (hyper-parameters and name)."""
        config = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        if isinstance(self.learning_rate, schedules.LearningRateSchedule):
            config["learning_rate"] = schedules.serialize(self.learning_rate)
        config["name"] = self._name
        return config


class SGD(Optimizer):
    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, lr=None, name="SGD"):
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)
        super().__init__(learning_rate, lr, name)

    def _make(self, lr):
        if self.momentum:
            return train.MomentumOptimizer(
                lr, self.momentum, use_nesterov=self.nesterov, name=self._name
            )
        return train.GradientDescentOptimizer(lr, name=self._name)


class Adam(Optimizer):
    def __init__(
        self,
        learning_rate=0.001,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        amsgrad=False,
        lr=None,
        name="Adam",
    ):
        if amsgrad:
            raise ValueError("Adam: amsgrad=True is not supported.")
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        super().__init__(learning_rate, lr, name)

    def _make(self, lr):
        return train.AdamOptimizer(
            lr, beta1=self.beta_1, beta2=self.beta_2, epsilon=self.epsilon, name=self._name
        )


class RMSprop(Optimizer):
    def __init__(
        self,
        learning_rate=0.001,
        rho=0.9,
        momentum=0.0,
        epsilon=1e-7,
        centered=False,
        lr=None,
        name="RMSprop",
    ):
        self.rho, self.momentum, self.epsilon = float(rho), float(momentum), float(epsilon)
        self.centered = bool(centered)
        super().__init__(learning_rate, lr, name)

    def _make(self, lr):
        return train.RMSPropOptimizer(
            lr,
            decay=self.rho,
            momentum=self.momentum,
            epsilon=self.epsilon,
            centered=self.centered,
            name=self._name,
        )


class Adagrad(Optimizer):
    def __init__(
        self,
        learning_rate=0.001,
        initial_accumulator_value=0.1,
        epsilon=1e-7,
        lr=None,
        name="Adagrad",
    ):
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.epsilon = float(epsilon)
        super().__init__(learning_rate, lr, name)

    def _make(self, lr):
        return train.AdagradOptimizer(
            lr, initial_accumulator_value=self.initial_accumulator_value, name=self._name
        )


class Adadelta(Optimizer):
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, lr=None, name="Adadelta"):
        self.rho, self.epsilon = float(rho), float(epsilon)
        super().__init__(learning_rate, lr, name)

    def _make(self, lr):
        return train.AdadeltaOptimizer(lr, rho=self.rho, epsilon=self.epsilon, name=self._name)


class Adamax(Optimizer):
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, lr=None,
                 name="Adamax"):
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        super().__init__(learning_rate, lr, name)

    def _make(self, lr):
        return AdaMaxOptimizer(lr, beta1=self.beta_1, beta2=self.beta_2, epsilon=self.epsilon,
                               name=self._name)


class Nadam(Optimizer):
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, lr=None,
                 name="Nadam", schedule_decay=0.004):
        if schedule_decay != 0.004:
            raise ValueError(f"Nadam: schedule_decay={schedule_decay} is not supported (TF's "
                             f"Nadam uses 0.004)")
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        super().__init__(learning_rate, lr, name)

    def _make(self, lr):
        return ScheduledNadamOptimizer(lr, beta1=self.beta_1, beta2=self.beta_2,
                                       epsilon=self.epsilon, name=self._name)


class Ftrl(Optimizer):
    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, name="Ftrl",
                 l2_shrinkage_regularization_strength=0.0, lr=None):
        self.learning_rate_power = float(learning_rate_power)
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.l1_regularization_strength = float(l1_regularization_strength)
        self.l2_regularization_strength = float(l2_regularization_strength)
        self.l2_shrinkage_regularization_strength = float(l2_shrinkage_regularization_strength)
        super().__init__(learning_rate, lr, name)

    def _make(self, lr):
        return train.FtrlOptimizer(
            lr, learning_rate_power=self.learning_rate_power,
            initial_accumulator_value=self.initial_accumulator_value,
            l1_regularization_strength=self.l1_regularization_strength,
            l2_regularization_strength=self.l2_regularization_strength,
            l2_shrinkage_regularization_strength=self.l2_shrinkage_regularization_strength,
            name=self._name)


_BY_NAME = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop, "adagrad": Adagrad,
            "adadelta": Adadelta, "adamax": Adamax, "nadam": Nadam, "ftrl": Ftrl}


def serialize(optimizer):
    """`{"class_name", "config"}` of a Keras optimizer."""
    return {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}


def deserialize(config, custom_objects=None):
    """The Keras optimizer `serialize` described (names are case-insensitive, as in TF).

    Raises:
        ValueError: an unknown optimizer class.
    """
    classes = {name.lower(): cls for name, cls in _BY_NAME.items()}
    classes.update({k.lower(): v for k, v in (custom_objects or {}).items()})
    name = str(config.get("class_name", "")).lower()
    if name not in classes:
        raise ValueError(f"Unknown optimizer: {config.get('class_name')}")
    settings = dict(config.get("config", {}))
    rate = settings.get("learning_rate")
    if isinstance(rate, dict):
        settings["learning_rate"] = schedules.deserialize(rate)
    return classes[name](**settings)


def get(identifier):
    """A Keras optimizer from a name ('sgd', 'adam', ...), a `serialize` dict or an instance;
    `tf.train` optimizers pass through."""
    if isinstance(identifier, (Optimizer, train.Optimizer)):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")
