"""The optimizers' `ResourceApply*` / `ResourceSparseApply*` ops: twins of the `Apply*` ops.

Each twin has its reference op's signature with every `Ref(T)` input replaced by a `resource`
handle and no output (as in TensorFlow); its kernel runs the reference op's kernel on the
variables' private copy-on-write buffers, so both front-ends share one update formula.
`apply_update(op, var, ...)` builds the reference op or its twin, whichever fits `var`.
"""

from __future__ import annotations

import inspect

from tensorflux.framework.op_def import define_op
from tensorflux.ops.state import resource_variable_ops, training_ops

__all__ = ["resource_twin", "apply_update", "RESOURCE_TWINS"]

RESOURCE_TWINS: dict = {}


def _arg_text(arg) -> str:
    if arg.is_ref:
        return f"{arg.name}: resource"
    if arg.type_attr is not None:
        return f"{arg.name}: {arg.type_attr}"
    return f"{arg.name}: {arg.fixed_type.name}"


def _attr_text(spec) -> str:
    kind = spec.kind
    if kind == "type" and spec.allowed is not None:
        kind = "{" + ", ".join(d.name for d in spec.allowed) + "}"
    text = f"{spec.name}: {kind}"
    if spec.has_default:
        text += f" = {getattr(spec.default, 'name', None) or repr(spec.default)}"
    return text


def resource_twin(ref_op):
    """Defines `Resource<ref_op>` (handles for refs, no output) running `ref_op`'s kernel.

    Args:
        ref_op: an `Apply*`/`SparseApply*` OpDef whose kernel takes refs and returns one.

    Returns:
        The twin OpDef (also recorded in `RESOURCE_TWINS` under the reference op's name).
    """
    refs = [k for k, arg in enumerate(ref_op.inputs) if arg.is_ref]
    twin = define_op(f"Resource{ref_op.name}", inputs=[_arg_text(a) for a in ref_op.inputs],
                     attrs=[_attr_text(s) for s in ref_op.attrs.values()], stateful=True,
                     differentiable=False)
    names = [a.name for a in ref_op.inputs]

    def _shape(*inputs):
        return []

    _shape.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
    twin.shape_fn(_shape)

    ref_kernel = ref_op.kernels["CPU"]
    ref_fn = ref_kernel.fn

    def _kernel(*inputs, **attrs):
        inputs = list(inputs)
        for k in refs:
            inputs[k] = resource_variable_ops.in_place(inputs[k])
        ref_fn(*inputs, **attrs)

    _kernel.__name__ = f"_resource_{ref_op.name.lower()}_kernel"
    _kernel.__signature__ = inspect.Signature(
        [inspect.Parameter("inputs", inspect.Parameter.VAR_POSITIONAL)]
        + [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY) for n in ref_kernel.attr_names])
    twin.kernel(_kernel)
    RESOURCE_TWINS[ref_op.name] = twin
    return twin


def apply_update(op, *args, **attrs):
    """Builds the update op `op(*args)`, or its Resource twin when `args[0]` is a resource
    variable (then every variable argument passes its handle); returns the Operation."""
    if not resource_variable_ops.is_resource_variable(args[0]):
        return op(*args, **attrs).op
    twin = RESOURCE_TWINS[op.name]
    args = list(args)
    for k, arg in enumerate(op.inputs):
        if arg.is_ref:
            if not resource_variable_ops.is_resource_variable(args[k]):
                raise TypeError(f"{twin.name}: input '{arg.name}' must be a resource variable "
                                f"like the updated variable, got {args[k]!r}")
            args[k] = args[k].handle
    return twin(*args, **attrs)


_TRAINING_OPS = (
    "ApplyGradientDescent", "ApplyProximalGradientDescent", "ApplyMomentum",
    "SparseApplyMomentum", "ApplyAdagrad", "SparseApplyAdagrad", "ApplyProximalAdagrad",
    "SparseApplyProximalAdagrad", "ApplyAdadelta", "SparseApplyAdadelta", "ApplyRMSProp",
    "ApplyCenteredRMSProp", "SparseApplyRMSProp", "SparseApplyCenteredRMSProp", "ApplyAdam",
    "ApplyFtrlV2", "ApplyFtrl", "SparseApplyFtrlV2", "SparseApplyFtrl",
)

for _name in _TRAINING_OPS:
    resource_twin(getattr(training_ops, _name))
