"""The TF1 compatibility switches programs call at their top (`tf.disable_v2_behavior()`, ...).

tensorflux is TF1 graph mode only: the `disable_*` switches (and the behaviour toggles that only
matter to TF2) are accepted as no-ops, while `enable_eager_execution` and `enable_v2_behavior`
raise a ValueError saying eager mode is not supported.
"""

from __future__ import annotations

__all__ = ["disable_v2_behavior", "enable_v2_behavior", "disable_eager_execution",
           "enable_eager_execution", "executing_eagerly", "disable_resource_variables",
           "enable_resource_variables", "resource_variables_enabled", "disable_control_flow_v2",
           "enable_control_flow_v2", "control_flow_v2_enabled", "disable_tensor_equality",
           "enable_tensor_equality", "disable_v2_tensorshape", "enable_v2_tensorshape"]

_EAGER_MESSAGE = ("tensorflux implements TensorFlow 1.x graph mode only: eager execution is not "
                  "supported. Build a graph and run it in a tf.Session instead.")


def disable_v2_behavior() -> None:
    """No-op: tensorflux always has TF1 behaviour (graph mode, ref variables, v1 control flow)."""


def enable_v2_behavior() -> None:
    """Always raises: TF2 behaviour means eager execution, which tensorflux does not have.

    Raises:
        ValueError: always.
    """
    raise ValueError(f"enable_v2_behavior: {_EAGER_MESSAGE}")


def disable_eager_execution() -> None:
    """No-op: tensorflux never executes eagerly."""


def enable_eager_execution(config=None, device_policy=None, execution_mode=None) -> None:
    """Always raises: tensorflux has no eager mode.

    Raises:
        ValueError: always.
    """
    raise ValueError(f"enable_eager_execution: {_EAGER_MESSAGE}")


def executing_eagerly() -> bool:
    """False: ops build graph nodes; values come from `Session.run`."""
    return False


_RESOURCE_VARIABLES = [False]


def disable_resource_variables() -> None:
    """Makes `tf.Variable` / `tf.get_variable` create reference variables (the TF1 default)."""
    _RESOURCE_VARIABLES[0] = False


def enable_resource_variables() -> None:
    """Makes `tf.Variable` / `tf.get_variable` create ResourceVariables unless
    `use_resource=False` is given."""
    _RESOURCE_VARIABLES[0] = True


def resource_variables_enabled() -> bool:
    """Whether `tf.Variable` creates ResourceVariables by default."""
    return _RESOURCE_VARIABLES[0]


def disable_control_flow_v2() -> None:
    """No-op: `tf.cond` and `tf.while_loop` build v1 control flow (Switch/Merge/Enter/Exit)."""


def enable_control_flow_v2() -> None:
    """No-op: only v1 control flow exists; graphs keep Switch/Merge/Enter/Exit."""


def control_flow_v2_enabled() -> bool:
    """False: control flow is built from the v1 primitives."""
    return False


def disable_tensor_equality() -> None:
    """No-op: tensors compare (and hash) by identity, as in TF1."""


def enable_tensor_equality() -> None:
    """No-op: tensors keep TF1's identity equality, so they stay usable as dict keys."""


def disable_v2_tensorshape() -> None:
    """No-op: `TensorShape` items are `Dimension`s, as in TF1."""


def enable_v2_tensorshape() -> None:
    """No-op: `TensorShape` keeps TF1 `Dimension` items (`dimension_value` reads both)."""


_LOG_DEVICE_PLACEMENT = [False]


def set_log_device_placement(enabled) -> None:
    """Records whether device placements should be logged (`tf.debugging`).

    As in TensorFlow 1.15 this is the eager context's switch: graph-mode sessions keep reading
    `ConfigProto.log_device_placement`, so it changes no session's behaviour.

    Args:
        enabled: whether to log device placement.
    """
    _LOG_DEVICE_PLACEMENT[0] = bool(enabled)


def log_device_placement_enabled() -> bool:
    """The value last given to `set_log_device_placement` (False at start)."""
    return _LOG_DEVICE_PLACEMENT[0]
