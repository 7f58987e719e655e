"""One op, one place (DESIGN.md, issue 12), checked from the registry.

- Every registered gradient is registered by the module that defines its op (`op_def.module`),
  so an op's signature, shape function, kernel, gradient and wrapper are read together and
  importing the op's module registers all of them.
- Every module under `tensorflux/ops/` defines at least one op, unless it is a family facade
  (`__init__.py`) or a declared helper below (with the reason it defines none).
"""

from __future__ import annotations

import pathlib

import pytest

import tensorflux  # noqa: F401 - registers every op, kernel and gradient
from tensorflux.framework.op_def import GRADIENTS, OP_DEFS

OPS_ROOT = pathlib.Path(tensorflux.__file__).parent / "ops"

# Op types whose gradient is registered outside the op's module: {op type: (module, reason)}.
# The while-loop gradient machinery (ops/control_flow/while_gradients.py) needs no entry: it
# differentiates loops through the autodiff hooks, not through registered gradients.
GRADIENT_ELSEWHERE: dict[str, tuple[str, str]] = {}

# Modules under ops/ that define no op, each with the reason (paths relative to ops/).
HELPER_MODULES = {
    # shared helpers
    "array/gradient_helpers.py": "gradient helpers shared by several families",
    "array/util.py": "shared argument checks and name scopes of the array ops",
    "io/feature_config.py": "the feature configuration types parse_example reads",
    "image/util.py": "shared name scopes and static-or-runtime checks of tf.image",
    "sparse/util.py": "shared SparseTensor checks and row-major index arithmetic",
    "control_flow/util.py": "nested structures and context queries for control flow",
    "random/seed.py": "graph- and op-level seed rules (TF1 get_seed)",
    "linalg/batch_matrix.py": "shape and kernel helpers of the batched-matrix ops",
    "math/weights_broadcast.py": "loss/metric weights checks (Assert) and broadcast, from ops",
    # graph construction that is not an op
    "autodiff/gradients.py": "tf.gradients: the backprop driver over registered gradients",
    "autodiff/custom_gradient.py": "tf.custom_gradient (gradient overrides of subgraphs)",
    "autodiff/checker.py": "tf.test.compute_gradient: Jacobians against finite differences",
    "autodiff/gradient_checker_v2.py": "compute_gradient(f, x): the TF2-style checker",
    "control_flow/ref_helpers.py": "TF's control_flow_ops wrappers over refs and composites",
    "control_flow/context.py": "control-flow contexts recorded on ops while graphs are built",
    "control_flow/while_loop.py": "tf.while_loop, built from the control-flow primitives",
    "control_flow/while_gradients.py": "the while-loop gradient machinery (backward loops)",
    "control_flow/functional.py": "tf.map_fn / foldl / foldr / scan built on tf.while_loop",
    # classes whose methods add ops defined elsewhere
    "data_flow/tensor_array_class.py": "the tf.TensorArray class (ops in tensor_array.py)",
    "data_flow/lookup_mutable.py": "the MutableHashTable / DenseHashTable classes",
    "state/variables.py": "the tf.Variable class and variable collections",
    "linalg/linear_operator.py": "the tf.linalg.LinearOperator base class (ops defined elsewhere)",
    "linalg/linear_operator_basic.py": "LinearOperators of one tensor (full, diag, identity...)",
    "linalg/linear_operator_combined.py": "LinearOperators built from others (adjoint, kron...)",
    "linalg/linear_operator_structured.py": "low-rank update, Householder, circulant, Toeplitz",
    "state/resource_variables.py": "the ResourceVariable class (ops: resource_variable_ops)",
    "autodiff/tape.py": "tf.GradientTape (graph mode: tf.gradients on demand)",
    "debug/shape_checks.py": "tf.debugging.assert_shapes, composed from the assert ops",
    "state/variable_def.py": "VariableDef protos of tf.Variable (to_proto / from_proto)",
    "control_flow/polymorphic_function.py": "tf.function tracing (its call ops: function_call)",
    "control_flow/defun.py": "TF1 function.Defun and functional_ops wrappers over the call and "
                             "functional control-flow ops",
    "ragged/ragged_tensor.py": "the RaggedTensor composite (values + row_splits)",
    "ragged/factories.py": "tf.ragged factories composed from array and math ops",
    "state/variable_scope.py": "tf.variable_scope / tf.get_variable",
    "state/variable_store.py": "the per-graph variable store behind tf.get_variable",
    "state/partitioned.py": "partitioned variables (shards of one logical variable)",
    "state/template.py": "tf.make_template",
    "state/initializers.py": "the TF1 initializer classes",
    "state/conv_initializers.py": "the convolutional orthogonal/delta initializer classes",
    # resources the kernels operate on (no graph code)
    "data_flow/queue_resource.py": "the queue resource the queue kernels share",
    "data_flow/queue_store.py": "element storage of the queue resource",
    "data_flow/lookup_table.py": "the lookup-table resource and its text-file parser",
    "data_flow/step_resources.py": "per-step resource containers (TensorArrays, stacks)",
    "data_flow/hang_watch.py": "blocked-dequeue diagnostics called by the queue resource",
    "io/reader_resource.py": "the reader resources the reader kernels share",
    "random/buffered_stream.py": "block draws the stateful random kernels hand out in order",
    # statistics and collections over ops defined elsewhere
    "flops_registry.py": "the flops statistic of the standard ops (tf.profiler sums them)",
    "state/resources.py": "tf.initialize_resources and the resource collections",
    # public composites built from other ops
    "math/clip.py": "tf.clip_by_* composites",
    "nn/functions.py": "tf.nn composites built from other ops",
    "nn/conv1d.py": "tf.nn 1-D convolution and pooling as 2-D ops",
    "nn/pool_generic.py": "tf.nn.pool and the rank-generic pooling wrappers",
    "nn/embedding.py": "tf.nn sparse embedding lookups",
    "nn/sampled_losses.py": "tf.nn.nce_loss / sampled_softmax_loss",
    "nn/rnn.py": "tf.nn.dynamic_rnn (one tf.while_loop)",
    "image/geometry.py": "tf.image flips, rotations, crops and pads as composites",
    "image/quality.py": "tf.image metrics and filters as composites",
    "signal/spectral.py": "tf.signal framing, windows and STFTs as composites",
    "signal/mel.py": "tf.signal DCTs and mel features as composites",
    "sparse/composites.py": "SparseTensor helpers built from other ops",
    "collective/exchange.py": "where collective kernels meet (executors by task)",
    "debug/checks.py": "tf.debugging.assert_* composites built from Assert",
    # to go
}


def _module_name(path: pathlib.Path) -> str:
    relative = path.relative_to(OPS_ROOT.parent.parent).with_suffix("")
    return ".".join(relative.parts)


def _op_modules() -> set[str]:
    return {op_def.module for _, op_def in OP_DEFS.items()}


def test_op_def_records_its_defining_module():
    for name, op_def in OP_DEFS.items():
        file = op_def.where.rsplit(":", 1)[0]
        assert op_def.module is not None, name
        assert file.endswith(op_def.module.replace(".", "/") + ".py") or \
            file.endswith(op_def.module.replace(".", "/") + "/__init__.py"), (name, file)


def test_every_gradient_is_registered_in_its_ops_module():
    misplaced = []
    for name, fn in GRADIENTS.items():
        op_def = OP_DEFS.get(name)
        if fn is None or op_def is None or not op_def.module.startswith("tensorflux."):
            continue  # not-differentiable markers; gradient overrides and tests' own ops
        if fn.__module__ == op_def.module:
            continue
        if GRADIENT_ELSEWHERE.get(name, (None,))[0] == fn.__module__:
            continue
        misplaced.append(f"{name}: defined in {op_def.module}, gradient in {fn.__module__}")
    assert not misplaced, "gradients registered away from their op:\n" + "\n".join(misplaced)


def test_gradient_allow_list_is_current():
    for name, (module, reason) in GRADIENT_ELSEWHERE.items():
        assert reason, name
        fn = GRADIENTS.get(name)
        assert fn is not None and fn.__module__ == module, (
            f"stale GRADIENT_ELSEWHERE entry {name}: its gradient is not in {module}")


def test_modules_under_ops_define_ops_unless_declared_helpers():
    defining = _op_modules()
    undeclared = []
    for path in sorted(OPS_ROOT.rglob("*.py")):
        if path.name == "__init__.py":
            continue
        relative = path.relative_to(OPS_ROOT).as_posix()
        if _module_name(path) not in defining and relative not in HELPER_MODULES:
            undeclared.append(relative)
    assert not undeclared, (
        "modules under ops/ that define no op and are not declared helpers (move their code "
        "to the op's module, to lib/, or declare them in HELPER_MODULES with a reason): "
        + ", ".join(undeclared))


@pytest.mark.parametrize("relative", sorted(HELPER_MODULES))
def test_declared_helper_exists_and_defines_no_op(relative):
    path = OPS_ROOT / relative
    assert path.is_file(), f"stale HELPER_MODULES entry: ops/{relative} no longer exists"
    assert HELPER_MODULES[relative]
    assert _module_name(path) not in _op_modules(), (
        f"ops/{relative} defines ops: remove it from HELPER_MODULES")
