"""`tf.keras.initializers`: the TF1 initializer classes under Keras names, and `get`."""

from __future__ import annotations

from tensorflux.keras import custom_objects
from tensorflux.ops.state import initializers as _init

Initializer, Zeros, Ones, Constant = _init.Initializer, _init.Zeros, _init.Ones, _init.Constant
RandomNormal, RandomUniform = _init.RandomNormal, _init.RandomUniform
TruncatedNormal, VarianceScaling = _init.TruncatedNormal, _init.VarianceScaling
GlorotNormal, GlorotUniform = _init.GlorotNormal, _init.GlorotUniform
Orthogonal, Identity = _init.Orthogonal, _init.Identity
he_normal, he_uniform = _init.he_normal, _init.he_uniform
lecun_normal, lecun_uniform = _init.lecun_normal, _init.lecun_uniform

__all__ = [
    "Initializer",
    "Zeros",
    "Ones",
    "Constant",
    "RandomNormal",
    "RandomUniform",
    "TruncatedNormal",
    "VarianceScaling",
    "GlorotNormal",
    "GlorotUniform",
    "Orthogonal",
    "Identity",
    "zeros",
    "ones",
    "constant",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "lecun_normal",
    "lecun_uniform",
    "orthogonal",
    "identity",
    "random_normal",
    "random_uniform",
    "truncated_normal",
    "get",
]

zeros = Zeros
ones = Ones
constant = Constant
glorot_normal = GlorotNormal
glorot_uniform = GlorotUniform
orthogonal = Orthogonal
identity = Identity
random_normal = RandomNormal
random_uniform = RandomUniform
truncated_normal = TruncatedNormal

_BY_NAME = {
    "zeros": Zeros,
    "ones": Ones,
    "constant": Constant,
    "glorot_normal": GlorotNormal,
    "glorot_uniform": GlorotUniform,
    "orthogonal": Orthogonal,
    "identity": Identity,
    "random_normal": RandomNormal,
    "random_uniform": RandomUniform,
    "truncated_normal": TruncatedNormal,
    "variance_scaling": VarianceScaling,
    "he_normal": he_normal,
    "he_uniform": he_uniform,
    "lecun_normal": lecun_normal,
    "lecun_uniform": lecun_uniform,
}
_BY_NAME.update(
    {
        cls.__name__: cls
        for cls in (
            Zeros,
            Ones,
            Constant,
            GlorotNormal,
            GlorotUniform,
            Orthogonal,
            Identity,
            RandomNormal,
            RandomUniform,
            TruncatedNormal,
            VarianceScaling,
        )
    }
)


def get(identifier):
    """An initializer instance from a name, an instance or a callable (None stays None)."""
    if identifier is None or (
        callable(identifier)
        and not isinstance(identifier, type)
        and not isinstance(identifier, str)
    ):
        return identifier
    if isinstance(identifier, str):
        custom = custom_objects.lookup(identifier)
        if custom is not None:
            return custom() if isinstance(custom, type) else custom
        if identifier not in _BY_NAME:
            raise ValueError(f"Unknown initializer: {identifier!r}")
        return _BY_NAME[identifier]()
    if isinstance(identifier, type):
        return identifier()
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}")
