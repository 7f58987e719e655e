"""The `Distribution` base class and `ReparameterizationType` (TF1 `tf.distributions`).

Contract: a distribution is an immutable bundle of parameter tensors built under one name
scope (`self.name`, ending in '/'); every public method opens that scope plus its own
(`Normal/log_prob/...`) and builds graph ops from the public tf ops, so gradients flow to the
parameters. Subclasses implement the private `_method`s they support; the public method falls
back on a related one (prob <-> log_prob, stddev <-> variance, survival <-> cdf) and raises
`UndefinedError` naming the method and the class when neither exists. It subclasses
NotImplementedError, which TF raises there, so TF1 code catching that keeps working.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, scopes
from tensorflux.framework import tensor as tensor_lib
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops

__all__ = ["Distribution", "ReparameterizationType", "FULLY_REPARAMETERIZED",
           "NOT_REPARAMETERIZED"]


class ReparameterizationType:
    """Whether samples are a differentiable function of the parameters (pathwise gradients).

    Compared by identity: use the module constants `FULLY_REPARAMETERIZED` and
    `NOT_REPARAMETERIZED`.
    """

    def __init__(self, rep_type: str):
        self._rep_type = rep_type

    def __repr__(self) -> str:
        return f"<Reparameterization Type: {self._rep_type}>"

    def __eq__(self, other) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)


FULLY_REPARAMETERIZED = ReparameterizationType("FULLY_REPARAMETERIZED")
NOT_REPARAMETERIZED = ReparameterizationType("NOT_REPARAMETERIZED")


class UndefinedError(NotImplementedError):
    """A quantity a distribution does not define (or a KL divergence nobody registered)."""


def _missing(method: str, dist) -> UndefinedError:
    return UndefinedError(f"{method} is not implemented: {type(dist).__name__}")  # TF wording


def _has(dist, method: str) -> bool:
    """Whether a subclass (not this base class) defines `method`."""
    return getattr(type(dist), method) is not getattr(Distribution, method)


class Distribution:
    """A batch of probability distributions with sampling, densities and statistics.

    Args:
        dtype: the type of samples (and of `event` arguments).
        reparameterization_type: `FULLY_REPARAMETERIZED` or `NOT_REPARAMETERIZED`.
        validate_args: add assert ops that check parameters and arguments at run time.
        allow_nan_stats: statistics that are undefined return NaN (True) or assert (False).
        parameters: the constructor's arguments (for `copy` and `parameters`).
        graph_parents: the tensors the distribution depends on.
        name: the name scope (a string ending in '/' reuses it as is).
    """

    def __init__(self, dtype, reparameterization_type, validate_args, allow_nan_stats,
                 parameters=None, graph_parents=None, name=None):
        graph_parents = [] if graph_parents is None else list(graph_parents)
        for i, t in enumerate(graph_parents):
            if t is None or not isinstance(t, tensor_lib.Tensor):
                raise ValueError(f"Graph parent item {i} is not a Tensor; {t}.")
        if not name or name[-1] != "/":
            non_unique = name or type(self).__name__
            with scopes.name_scope(non_unique) as scope:
                name = scope
        self._dtype = dtype
        self._reparameterization_type = reparameterization_type
        self._allow_nan_stats = allow_nan_stats
        self._validate_args = validate_args
        self._parameters = dict(parameters or {})
        self._parameters.pop("self", None)
        self._parameters.pop("__class__", None)
        self._graph_parents = graph_parents
        self._name = name

    # -- properties ----------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def parameters(self) -> dict:
        """The constructor's arguments, as passed."""
        return dict(self._parameters)

    @property
    def reparameterization_type(self) -> ReparameterizationType:
        return self._reparameterization_type

    @property
    def allow_nan_stats(self) -> bool:
        return self._allow_nan_stats

    @property
    def validate_args(self) -> bool:
        return self._validate_args

    @property
    def graph_parents(self) -> list:
        return self._graph_parents

    def copy(self, **override_parameters_kwargs):
        """A new distribution of the same class with some constructor arguments replaced."""
        parameters = dict(self.parameters, **override_parameters_kwargs)
        return type(self)(**parameters)

    @classmethod
    def param_shapes(cls, sample_shape, name="DistributionParamShapes"):
        """Shapes of the parameters that give samples of `sample_shape` (a dict of tensors)."""
        with scopes.name_scope(name, values=[sample_shape]):
            return cls._param_shapes(sample_shape)

    @classmethod
    def param_static_shapes(cls, sample_shape):
        """`param_shapes` as TensorShapes, for a fully known `sample_shape`."""
        if isinstance(sample_shape, TensorShape):
            if not sample_shape.is_fully_defined():
                raise ValueError("TensorShape sample_shape must be fully defined")
            sample_shape = sample_shape.as_list()
        params = cls.param_shapes(sample_shape)
        static = {}

        for name, shape in params.items():
            value = constant_value(shape)
            if value is None:
                raise ValueError(f"sample_shape must be a fully-defined TensorShape or list/tuple "
                                 f"(parameter {name}).")
            static[name] = TensorShape([int(d) for d in np.reshape(value, [-1])])
        return static

    @classmethod
    def _param_shapes(cls, sample_shape):
        raise _missing("_param_shapes", cls)

    # -- shapes --------------------------------------------------------------------------------

    @property
    def batch_shape(self) -> TensorShape:
        """The static shape of one sample's batch of independent distributions."""
        return TensorShape(self._batch_shape())

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        """The batch shape as a 1-D int32 tensor."""
        with self._name_scope(name):
            static = self.batch_shape
            if static.is_fully_defined():
                return array_ops.constant(static.as_list(), dtype=dtypes.int32, name="batch_shape")
            return self._batch_shape_tensor()

    @property
    def event_shape(self) -> TensorShape:
        """The static shape of a single draw from one of the distributions."""
        return TensorShape(self._event_shape())

    def event_shape_tensor(self, name="event_shape_tensor"):
        """The event shape as a 1-D int32 tensor."""
        with self._name_scope(name):
            static = self.event_shape
            if static.is_fully_defined():
                return array_ops.constant(static.as_list(), dtype=dtypes.int32, name="event_shape")
            return self._event_shape_tensor()

    def _event_shape(self):
        return TensorShape([])

    def _event_shape_tensor(self):
        return array_ops.constant([], dtype=dtypes.int32)

    def is_scalar_event(self, name="is_scalar_event"):
        with self._name_scope(name):
            return array_ops.constant(self.event_shape.ndims == 0, name="is_scalar_event")

    def is_scalar_batch(self, name="is_scalar_batch"):
        with self._name_scope(name):
            return array_ops.constant(self.batch_shape.ndims == 0, name="is_scalar_batch")

    # -- sampling ------------------------------------------------------------------------------

    def sample(self, sample_shape=(), seed=None, name="sample"):
        """Draws samples of shape `sample_shape + batch_shape + event_shape`.

        Args:
            sample_shape: int or 1-D ints: how many samples (default one, no extra axis).
            seed: op-level seed (see `tf.set_random_seed`).
            name: name of the scope.

        Returns:
            A tensor of `self.dtype`.
        """
        with self._name_scope(name, values=[sample_shape]):
            static_sample = _static_sample_shape(sample_shape)
            if isinstance(sample_shape, (list, tuple)) and not sample_shape:
                sample_shape_t = array_ops.constant([], dtype=dtypes.int32, name="sample_shape")
            else:
                sample_shape_t = convert_to_tensor(sample_shape, dtype=dtypes.int32,
                                                   name="sample_shape")
            if sample_shape_t.shape.ndims == 0:
                sample_shape_t = array_ops.reshape(sample_shape_t, [1])
            samples = self._sample_n(math_ops.reduce_prod(sample_shape_t), seed)
            result = array_ops.reshape(samples,
                                       array_ops.concat([sample_shape_t,
                                                         array_ops.shape(samples)[1:]], 0))
            if static_sample is not None:
                static = static_sample.concatenate(samples.shape[1:])
                if result.shape.is_compatible_with(static):
                    result.set_shape(static)
            return result

    def _sample_n(self, n, seed=None):
        raise _missing("sample_n", self)

    # -- densities -----------------------------------------------------------------------------

    def _value(self, value):
        return convert_to_tensor(value, name="value", preferred_dtype=self.dtype)

    def log_prob(self, value, name="log_prob"):
        """Log probability density (or mass) of `value`."""
        with self._name_scope(name, values=[value]):
            value = self._value(value)
            if _has(self, "_log_prob"):
                return self._log_prob(value)
            if _has(self, "_prob"):
                return math_ops.log(self._prob(value))
            raise _missing("log_prob", self)

    def prob(self, value, name="prob"):
        """Probability density (or mass) of `value`."""
        with self._name_scope(name, values=[value]):
            value = self._value(value)
            if _has(self, "_prob"):
                return self._prob(value)
            if _has(self, "_log_prob"):
                return math_ops.exp(self._log_prob(value))
            raise _missing("prob", self)

    def log_cdf(self, value, name="log_cdf"):
        """log P[X <= value]."""
        with self._name_scope(name, values=[value]):
            value = self._value(value)
            if _has(self, "_log_cdf"):
                return self._log_cdf(value)
            if _has(self, "_cdf"):
                return math_ops.log(self._cdf(value))
            raise _missing("log_cdf", self)

    def cdf(self, value, name="cdf"):
        """P[X <= value]."""
        with self._name_scope(name, values=[value]):
            value = self._value(value)
            if _has(self, "_cdf"):
                return self._cdf(value)
            if _has(self, "_log_cdf"):
                return math_ops.exp(self._log_cdf(value))
            raise _missing("cdf", self)

    def log_survival_function(self, value, name="log_survival_function"):
        """log P[X > value]."""
        with self._name_scope(name, values=[value]):
            value = self._value(value)
            if _has(self, "_log_survival_function"):
                return self._log_survival_function(value)
            if _has(self, "_survival_function"):
                return math_ops.log(self._survival_function(value))
            if _has(self, "_cdf") or _has(self, "_log_cdf"):
                return math_ops.log1p(-self._any_cdf(value))
            raise _missing("log_survival_function", self)

    def survival_function(self, value, name="survival_function"):
        """P[X > value] = 1 - cdf(value)."""
        with self._name_scope(name, values=[value]):
            value = self._value(value)
            if _has(self, "_survival_function"):
                return self._survival_function(value)
            if _has(self, "_log_survival_function"):
                return math_ops.exp(self._log_survival_function(value))
            if _has(self, "_cdf") or _has(self, "_log_cdf"):
                return 1.0 - self._any_cdf(value)
            raise _missing("survival_function", self)

    def _any_cdf(self, value):
        if _has(self, "_cdf"):
            return self._cdf(value)
        return math_ops.exp(self._log_cdf(value))

    def quantile(self, value, name="quantile"):
        """The inverse CDF at probability `value`."""
        with self._name_scope(name, values=[value]):
            value = self._value(value)
            if _has(self, "_quantile"):
                return self._quantile(value)
            raise _missing("quantile", self)

    # -- statistics ----------------------------------------------------------------------------

    def _statistic(self, method: str, name: str):
        with self._name_scope(name):
            if _has(self, "_" + method):
                return getattr(self, "_" + method)()
            raise _missing(method, self)

    def entropy(self, name="entropy"):
        """Shannon entropy in nats."""
        return self._statistic("entropy", name)

    def mean(self, name="mean"):
        return self._statistic("mean", name)

    def mode(self, name="mode"):
        return self._statistic("mode", name)

    def covariance(self, name="covariance"):
        """Covariance matrices over the event (scalar events: the variance)."""
        return self._statistic("covariance", name)

    def variance(self, name="variance"):
        with self._name_scope(name):
            if _has(self, "_variance"):
                return self._variance()
            if _has(self, "_stddev"):
                return math_ops.square(self._stddev())
            raise _missing("variance", self)

    def stddev(self, name="stddev"):
        with self._name_scope(name):
            if _has(self, "_stddev"):
                return self._stddev()
            if _has(self, "_variance"):
                return math_ops.sqrt(self._variance())
            raise _missing("stddev", self)

    def cross_entropy(self, other, name="cross_entropy"):
        """H[self, other] = entropy(self) + KL(self || other)."""
        # cycle: distributions.kullback_leibler imports this module (at import time)
        from tensorflux.distributions.kullback_leibler import kl_divergence

        with self._name_scope(name):
            return self.entropy() + kl_divergence(self, other)

    def kl_divergence(self, other, name="kl_divergence"):
        """KL(self || other) from the registered pair (see `tf.distributions.RegisterKL`)."""
        # cycle: distributions.kullback_leibler imports this module (at import time)
        from tensorflux.distributions.kullback_leibler import kl_divergence

        with self._name_scope(name):
            return kl_divergence(self, other)

    # -- private methods subclasses may implement ----------------------------------------------

    def _batch_shape(self):
        return TensorShape(None)

    def _batch_shape_tensor(self):
        raise _missing("batch_shape_tensor", self)

    def _log_prob(self, value):
        raise _missing("log_prob", self)

    def _prob(self, value):
        raise _missing("prob", self)

    def _cdf(self, value):
        raise _missing("cdf", self)

    def _log_cdf(self, value):
        raise _missing("log_cdf", self)

    def _survival_function(self, value):
        raise _missing("survival_function", self)

    def _log_survival_function(self, value):
        raise _missing("log_survival_function", self)

    def _quantile(self, value):
        raise _missing("quantile", self)

    def _entropy(self):
        raise _missing("entropy", self)

    def _mean(self):
        raise _missing("mean", self)

    def _mode(self):
        raise _missing("mode", self)

    def _variance(self):
        raise _missing("variance", self)

    def _stddev(self):
        raise _missing("stddev", self)

    def _covariance(self):
        raise _missing("covariance", self)

    # -- helpers -------------------------------------------------------------------------------

    def _name_scope(self, name=None, values=None):
        return _DistributionScope(self._name, name, values)

    def __str__(self) -> str:
        return (f'tf.distributions.{type(self).__name__}("{self.name}", '
                f"batch_shape={_shape_text(self.batch_shape)}, "
                f"event_shape={_shape_text(self.event_shape)}, dtype={self.dtype.name})")

    def __repr__(self) -> str:
        return (f"<tf.distributions.{type(self).__name__} '{self.name}' "
                f"batch_shape={_shape_text(self.batch_shape)} "
                f"event_shape={_shape_text(self.event_shape)} dtype={self.dtype.name}>")


class _DistributionScope:
    """`with dist._name_scope("log_prob")`: the distribution's scope, then the method's."""

    def __init__(self, outer, inner, values):
        self._outer = scopes.name_scope(outer)
        self._inner = scopes.name_scope(inner, values=[v for v in (values or []) if v is not None])

    def __enter__(self):
        self._outer.__enter__()
        try:
            return self._inner.__enter__()
        except BaseException:
            self._outer.__exit__(None, None, None)
            raise

    def __exit__(self, *exc):
        self._inner.__exit__(*exc)
        return self._outer.__exit__(*exc)


def _static_sample_shape(sample_shape):
    """The sample shape as a TensorShape when it is known at graph-construction time."""
    if isinstance(sample_shape, tensor_lib.Tensor):
        value = constant_value(sample_shape)
        if value is None:
            return None
        sample_shape = value
    if isinstance(sample_shape, TensorShape):
        return sample_shape
    if isinstance(sample_shape, (list, tuple)) and any(
            isinstance(d, tensor_lib.Tensor) for d in sample_shape):
        return TensorShape([None] * len(sample_shape))
    return TensorShape([int(d) for d in np.reshape(np.asarray(sample_shape, np.int64), [-1])])


def _shape_text(shape: TensorShape) -> str:
    if shape.ndims is None:
        return "<unknown>"
    return "(" + ", ".join("?" if d is None else str(int(d)) for d in shape._dim_list) + \
        ("," if shape.ndims == 1 else "") + ")"
