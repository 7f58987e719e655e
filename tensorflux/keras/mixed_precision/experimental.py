"""`tf.keras.mixed_precision.experimental`: dtype policies of Keras layers (TF 1.14/1.15).

A `Policy` names the compute and variable dtypes of layers. Under TF1 ("V1 dtype behavior",
the only behavior here) every layer infers its dtype from its first input: the global
policy is "infer" and cannot be changed; layers do not consult policies.
"""

from __future__ import annotations

from tensorflux.keras.mixed_precision.loss_scale_optimizer import LossScaleOptimizer

__all__ = ["LossScaleOptimizer", "Policy", "global_policy", "set_policy"]

_DTYPES = ("float16", "bfloat16", "float32", "float64")
_MIXED = {"mixed_float16": "float16", "mixed_bfloat16": "bfloat16"}


class Policy:
    """A dtype policy: `name` is "infer", a floating dtype name ("float32", ...), or
    "mixed_float16" / "mixed_bfloat16" (float16/bfloat16 compute, float32 variables).

    Raises:
        TypeError: `name` is not a string.
        ValueError: an unknown policy name.
    """

    def __init__(self, name, loss_scale=None):
        if not isinstance(name, str):
            raise TypeError(f"'name' must be a string, not a {type(name).__name__}: {name!r}")
        if name != "infer" and name not in _DTYPES and name not in _MIXED:
            raise ValueError(
                f'Cannot convert value {name!r} to a mixed precision Policy. Valid policies '
                'include "mixed_float16", "mixed_bfloat16", "infer" and the name of any '
                "floating dtype such as \"float32\".")
        self._name = name
        self._loss_scale = loss_scale

    @property
    def name(self):
        return self._name

    @property
    def compute_dtype(self):
        """The dtype of layer computations (None for "infer")."""
        if self._name == "infer":
            return None
        return _MIXED.get(self._name, self._name)

    @property
    def variable_dtype(self):
        """The dtype of layer variables (None for "infer")."""
        if self._name == "infer":
            return None
        return "float32" if self._name in _MIXED else self._name

    @property
    def should_cast_variables(self):
        return self.variable_dtype is not None and self.variable_dtype != self.compute_dtype

    @property
    def loss_scale(self):
        return self._loss_scale

    def __repr__(self):
        return f"<Policy \"{self._name}\">"

    def get_config(self):
        return {"name": self._name}


_GLOBAL = Policy("infer")


def global_policy():
    """The global policy: always Policy("infer") under TF1 (V1) dtype behavior."""
    return _GLOBAL


def set_policy(policy):
    """Sets the global policy. Under V1 dtype behavior only "infer" (the default) is
    accepted, as in TF 1.15.

    Raises:
        ValueError: any other policy (TF 1.x refuses it the same way), or an unknown name.
        TypeError: `policy` is neither a Policy, a string nor None.
    """
    if policy is None:
        return
    if isinstance(policy, str):
        policy = Policy(policy)
    if not isinstance(policy, Policy):
        raise TypeError(f"set_policy: expected a Policy or a string, got {policy!r}")
    if policy.name != "infer":
        raise ValueError("The global policy can only be set in TensorFlow 2 or if V2 dtype "
                         "behavior has been set; tensorflux implements TF1 (V1) dtype "
                         f"behavior, where layers infer their dtype. Got {policy!r}.")
