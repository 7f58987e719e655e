"""The straight-line fast path: a plan with no control flow and no asynchronous kernel is
compiled once into one Python function, so a step costs one call per op and nothing else.

Two kinds of node cost no call at all: a `Const` (its kernel returns the same read-only array
every step, so that array is bound once, as namespace data) and a pass-through whose kernel
returns its input unchanged (`Identity`, `StopGradient`, ...: its consumers read the input's
variable; a ref input is read in its place, as the kernel would have received it). Control
edges need no code: the function runs the plan's topological order.

Inter-op overlap (`runtime/overlap.py`): heavy kernels off the critical path may run in the
background on the step's inter-op pool; the function then runs the driver's program of the
plan-time schedule, with `ov.spawn(...)` / `ov.join(...)` lines for those kernels.

Security contract: the generated source is made ONLY of fixed text and identifiers built from
`int` counters of our own enumeration (`v<n>` values, `k<n>` kernels, `a<n>` feed positions,
`j<n>` background jobs, `f<n>` their cost checks, `n<n>` their plan items):
no name, attr or other value of the graph ever becomes source text. Kernels and feed positions
(the `_Arg` nodes' `index` attrs) reach the function as namespace data, and `_ident` refuses
anything that is not a Python int, so a graph that arrives over RPC cannot inject code. A
failure is mapped back to its node through the line number of the generated code.
"""

from __future__ import annotations

import itertools
import operator

from tensorflux.framework import errors
from tensorflux.framework.op_def import get_op_def
from tensorflux.runtime import overlap as overlap_mod
from tensorflux.runtime.executor import end_step
from tensorflux.runtime.plan import ARG, CTX, NOOP, Plan
from tensorflux.runtime.step import node_error

_COUNTER = itertools.count()


def eligible(plan: Plan) -> bool:
    return not plan.has_control_flow and not plan.has_async


def _ident(prefix: str, number: int) -> str:
    """An identifier of generated code: a fixed prefix and one of our own integers."""
    if type(number) is not int:  # noqa: E721 - bool, str and int subclasses are all refused
        raise TypeError(f"fast path identifiers are built from ints only, got {number!r}")
    return f"{prefix}{number}"


def _pass_through_kernel():
    """The kernel function of ops returning their input unchanged (Identity's)."""
    return get_op_def("Identity").kernels["CPU"].fn


def _constant_value(item):
    """The array a Const item's kernel returns every step, or None for other items."""
    if item.node.op != "Const" or item.node.inputs or item.n_outputs != 1:
        return None
    value = item.kernel()
    return value if getattr(value, "flags", None) is not None and \
        not value.flags.writeable else None


def _feed_position(item) -> int:
    try:
        position = operator.index(item.arg_index)
    except TypeError:
        position = -1
    if isinstance(position, bool) or position < 0:
        raise errors.InvalidArgumentError(
            None, None, f"_Arg node '{item.node.name}': attr 'index' must be a non-negative "
            f"int, got {item.arg_index!r}.")
    return int(position)


class FastPath:
    """Compiled straight-line step: `run(ctx, feeds, pool) -> list of fetched values`.

    With `overlap` (on only with `TFX_OVERLAP=1`, see `overlap.enabled`), heavy kernels off the
    critical path run in the background on the step's inter-op pool (`runtime/overlap.py`):
    the generated function then runs the driver's program of `overlap.schedule`, with
    `ov.spawn(...)` and `ov.join(...)` lines for them.
    """

    def __init__(self, plan: Plan, overlap: bool = True):
        self.plan = plan
        names: dict = {}
        namespace: dict = {}
        lines = ["def _step(ctx, feeds, ov):"]
        line_nodes = [None]
        uses: dict = {}
        for item in plan.items:
            for src, idx in item.node.inputs:
                uses[(id(src), idx)] = uses.get((id(src), idx), 0) + 1
        for item, idx in plan.fetches:
            uses[(id(item.node), idx)] = uses.get((id(item.node), idx), 0) + 1_000_000

        def emit(text, item):
            lines.append("    " + text)
            line_nodes.append(item)

        pass_through = _pass_through_kernel()
        program = None
        if overlap and overlap_mod.enabled():
            program = overlap_mod.schedule(plan, pass_through)
        self.overlapped = program is not None
        if program is None:
            program = [("run", item) for item in plan.items]
        spawned: dict = {}
        for action, item in program:
            position = item.id
            node = item.node
            if action == "join":
                outs = spawned.pop(position)
                job = _ident("j", position)
                if outs[0] == "_":
                    emit(f"ov.join({job})", item)
                else:
                    emit(f"{outs[0]} = ov.join({job})", item)
                continue
            if item.kind == NOOP:
                continue
            if item.kernel is pass_through and item.n_inputs == 1 and item.n_outputs == 1 \
                    and item.mode != CTX:
                src, idx = node.inputs[0]
                var = names[(id(src), idx)]
                if 0 in item.deref:
                    var = _ident("v", len(names))
                    emit(f"{var} = {names[(id(src), idx)]}.read()", item)
                names[(id(node), 0)] = var
                continue
            value = _constant_value(item)
            if value is not None:
                const = _ident("c", position)
                namespace[const] = value
                names[(id(node), 0)] = const
                continue
            outs = []
            for idx in range(item.n_outputs):
                if uses.get((id(node), idx)):
                    var = _ident("v", len(names))
                    names[(id(node), idx)] = var
                    outs.append(var)
                else:
                    outs.append("_")
            args = []
            for k, (src, idx) in enumerate(node.inputs):
                var = names[(id(src), idx)]
                args.append(f"{var}.read()" if k in item.deref else var)
            if item.kind == ARG:
                feed = _ident("a", position)
                namespace[feed] = _feed_position(item)
                emit(f"{outs[0]} = feeds[{feed}]", item)
                continue
            kernel = _ident("k", position)
            namespace[kernel] = item.kernel
            if action == "spawn":
                flops, ref = _ident("f", position), _ident("n", position)
                namespace[flops] = overlap_mod.runtime_check(node.op, node.attrs,
                                                                 overlap_mod.static_large(item))
                namespace[ref] = item
                spawn_args = ", ".join([kernel, flops, ref] + args)
                emit(f"{_ident('j', position)} = ov.spawn({spawn_args})", item)
                spawned[position] = outs
                continue
            call_args = ", ".join((["ctx"] if item.mode == CTX else []) + args)
            call = f"{kernel}({call_args})"
            if item.n_outputs == 0 or all(o == "_" for o in outs):
                emit(call, item)
            elif item.n_outputs == 1:
                emit(f"{outs[0]} = {call}", item)
            else:
                emit(f"{', '.join(outs)}, = {call}", item)
        fetched = [names[(id(item.node), idx)] for item, idx in plan.fetches]
        emit(f"return [{', '.join(fetched)}]", None)
        source = "\n".join(lines) + "\n"
        filename = f"<tensorflux-plan-{next(_COUNTER)}>"
        # Safe by the contract above: only fixed text and `_ident` names are in `source`.
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102
        self._fn = namespace["_step"]
        self._code = self._fn.__code__
        self._line_nodes = line_nodes
        self._position = {id(item.node): item.id for item in plan.items}
        self.source = source

    def run(self, ctx, feeds, pool=None):
        """Runs one step; `pool`: the inter-op pool background kernels may use (None: all
        inline)."""
        if not self.overlapped:
            try:
                return self._fn(ctx, feeds, None)
            except Exception as err:  # noqa: BLE001 - mapped to the failing node below
                raise node_error(self._failing_node(err), err) from None
            finally:
                if self.plan.step_scoped:
                    end_step(ctx)
        ov = overlap_mod.StepOverlap(pool)
        try:
            return self._fn(ctx, feeds, ov)
        except Exception as err:  # noqa: BLE001 - mapped to the failing node below
            node = self._failing_node(err)
            failures = ov.settle()
            if failures:
                first_node, first = overlap_mod.first_in_order(
                    [(fail.node, error) for fail, error in failures] + [(node, err)],
                    self._position)
                if first is not err:
                    raise node_error(first_node, first) from None
            raise node_error(node, err) from None
        finally:
            if ov.jobs:
                ov.settle()
            if self.plan.step_scoped:
                end_step(ctx)

    def _failing_node(self, err):
        tb = err.__traceback__
        node = None
        while tb is not None:
            if tb.tb_frame.f_code is self._code:
                index = tb.tb_lineno - 1
                if 0 <= index < len(self._line_nodes) and self._line_nodes[index] is not None:
                    node = self._line_nodes[index].node
            tb = tb.tb_next
        return node
