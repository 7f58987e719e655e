"""Soft device placement and the eager-only execution settings of `tf.config` (graph mode:
recorded and reported; sessions honour soft placement)."""

from __future__ import annotations

from tensorflux.runtime.process_config import defaults

__all__ = ["get_soft_device_placement", "set_soft_device_placement", "get_device_policy",
           "set_device_policy", "get_synchronous_execution", "set_synchronous_execution"]

_POLICIES = (None, "warn", "explicit", "silent", "silent_for_int32")
_state = {"device_policy": None, "synchronous": True}


def get_soft_device_placement():
    """True when sessions fall back to an available device for an unplaceable op."""
    return defaults.soft_device_placement


def set_soft_device_placement(enabled):
    """Soft placement for sessions created afterwards (ConfigProto.allow_soft_placement)."""
    defaults.update(soft_device_placement=bool(enabled))


def get_device_policy():
    """The eager device policy (None: the default, 'silent')."""
    return _state["device_policy"]


def set_device_policy(device_policy):
    """Records the eager device policy.

    Raises:
        ValueError: not one of None, 'warn', 'explicit', 'silent', 'silent_for_int32'.
    """
    if device_policy not in _POLICIES:
        raise ValueError(f"Not a valid device policy: {device_policy!r}")
    _state["device_policy"] = device_policy


def get_synchronous_execution():
    """Whether eager ops run synchronously (always True here)."""
    return _state["synchronous"]


def set_synchronous_execution(enable):
    """Records the eager execution mode (ops always run synchronously in sessions)."""
    _state["synchronous"] = bool(enable) if enable is not None else True
