"""The straight-line fast path: a plan with no control flow and no asynchronous kernel is
compiled once into one Python function, so a step costs one call per op and nothing else.

The generated source is made only from our own identifiers (never from user strings); kernels
and the feeds arrive as arguments and closure globals. A failure is mapped back to its node
through the line number of the generated code.
"""

from __future__ import annotations

import itertools

from tensorflux.runtime.executor import end_step
from tensorflux.runtime.plan import ARG, CTX, NOOP, Plan
from tensorflux.runtime.step import node_error

_COUNTER = itertools.count()


def eligible(plan: Plan) -> bool:
    return not plan.has_control_flow and not plan.has_async


class FastPath:
    """Compiled straight-line step: `run(ctx, feeds) -> list of fetched values`."""

    def __init__(self, plan: Plan):
        self.plan = plan
        names: dict = {}
        namespace: dict = {}
        lines = ["def _step(ctx, feeds):"]
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

        for item in plan.items:
            node = item.node
            outs = []
            for idx in range(item.n_outputs):
                if uses.get((id(node), idx)):
                    var = f"v{len(names)}"
                    names[(id(node), idx)] = var
                    outs.append(var)
                else:
                    outs.append("_")
            args = []
            for k, (src, idx) in enumerate(node.inputs):
                var = names[(id(src), idx)]
                args.append(f"{var}.read()" if k in item.deref else var)
            if item.kind == ARG:
                emit(f"{outs[0]} = feeds[{item.arg_index}]", item)
                continue
            if item.kind == NOOP:
                continue
            kernel = f"k{item.id}"
            namespace[kernel] = item.kernel
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
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own generated code
        self._fn = namespace["_step"]
        self._code = self._fn.__code__
        self._line_nodes = line_nodes
        self.source = source

    def run(self, ctx, feeds):
        try:
            return self._fn(ctx, feeds)
        except Exception as err:  # noqa: BLE001 - mapped to the failing node below
            raise node_error(self._failing_node(err), err) from None
        finally:
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
