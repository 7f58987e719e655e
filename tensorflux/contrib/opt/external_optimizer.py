"""`tf.contrib.opt.ScipyOptimizerInterface`: minimize a graph's loss with `scipy.optimize`.

The variables are packed into one flat float64 vector; SciPy asks for the loss and its gradient
at a point, which are computed by running the graph with the variables *fed* at that point (the
variables themselves change only once, at the end, when the solution is assigned to them).
`loss_callback(*fetches)` runs after every evaluation, `step_callback(x)` after every solver
iteration, as in TF 1.15. SciPy is an optional dependency (`pip install 'tensorflux[scipy]'`),
imported on first use; without it `minimize` raises UnimplementedError naming the package.
"""

from __future__ import annotations

import logging

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops.array.constants import placeholder
from tensorflux.ops.autodiff.gradients import gradients
from tensorflux.ops.state.variable_ops import assign

__all__ = ["ExternalOptimizerInterface", "ScipyOptimizerInterface"]

_LOG = logging.getLogger("tensorflux")


def _shape_tuple(var) -> tuple:
    return tuple(var.get_shape().as_list())


def _scipy_minimize():
    try:
        from scipy import optimize  # optional dependency, imported on first use
    except ImportError:
        raise errors.UnimplementedError(
            None, None, "ScipyOptimizerInterface needs the SciPy package, which is not "
            "installed: pip install scipy") from None
    return optimize.minimize


class ExternalOptimizerInterface:
    """Base class: packs `var_list` and the gradients of the loss and of the constraints.

    Args:
        loss: scalar Tensor to minimize.
        var_list: variables to optimize (default: the graph's trainable variables).
        equalities: Tensors constrained to be 0.
        inequalities: Tensors constrained to be >= 0.
        var_to_bounds: {variable: (low, high)}; each bound a scalar or an array broadcastable
            to the variable's shape (`-np.inf` / `np.inf` for none).
        **optimizer_kwargs: passed to the external optimizer.

    Raises:
        ValueError: a variable without a fully defined shape, or no variables.
    """

    def __init__(self, loss, var_list=None, equalities=None, inequalities=None,
                 var_to_bounds=None, **optimizer_kwargs):
        self._loss = convert_to_tensor(loss)
        self._equalities = list(equalities or [])
        self._inequalities = list(inequalities or [])
        if var_list is None:
            var_list = graph_mod.get_default_graph().get_collection(
                GraphKeys.TRAINABLE_VARIABLES)
        self._vars = list(var_list)
        if not self._vars:
            raise ValueError("No variables to optimize.")
        for var in self._vars:
            if not var.get_shape().is_fully_defined():
                raise ValueError(f"Variable {var.name} has an undefined shape "
                                 f"{var.get_shape()}; ScipyOptimizerInterface needs full shapes.")
        self._packed_bounds = self._pack_bounds(var_to_bounds)
        self._update_placeholders = [placeholder(var.dtype.base_dtype)
                                     for var in self._vars]
        self._var_updates = [
            assign(var, array_ops.reshape(ph, _shape_tuple(var)))
            for var, ph in zip(self._vars, self._update_placeholders)]
        self._packed_loss_grad = self._pack_grads(self._loss)
        self._packed_equality_grads = [self._pack_grads(e) for e in self._equalities]
        self._packed_inequality_grads = [self._pack_grads(i) for i in self._inequalities]
        self.optimizer_kwargs = optimizer_kwargs
        sizes = [int(np.prod(_shape_tuple(var), dtype=np.int64)) for var in self._vars]
        ends = np.cumsum(sizes)
        self._packing_slices = [slice(int(end - size), int(end)) for end, size in zip(ends, sizes)]
        self._packed_var = self._pack([var.value() if hasattr(var, "value") else var
                                       for var in self._vars])

    def _pack(self, tensors):
        flat = [array_ops.reshape(t, [-1]) for t in tensors]
        return flat[0] if len(flat) == 1 else array_ops.concat(flat, 0)

    def _pack_grads(self, tensor):
        grads = gradients(tensor, self._vars)
        return self._pack([array_ops.zeros_like(var) if g is None else g
                           for g, var in zip(grads, self._vars)])

    def _pack_bounds(self, var_to_bounds):
        if var_to_bounds is None:
            return None
        low, high = [], []
        for var in self._vars:
            shape = _shape_tuple(var)
            bounds = var_to_bounds.get(var, (-np.inf, np.inf))
            low.extend(np.broadcast_to(bounds[0], shape).astype(np.float64).flat)
            high.extend(np.broadcast_to(bounds[1], shape).astype(np.float64).flat)
        return list(zip(low, high))

    def minimize(self, session=None, feed_dict=None, fetches=None, step_callback=None,
                 loss_callback=None, **run_kwargs):
        """Runs the external optimizer and assigns its solution to the variables.

        Args:
            session: the Session (default: the default session).
            feed_dict: feeds for every evaluation (the variables are fed on top).
            fetches: extra tensors fetched with the loss; passed to `loss_callback`.
            step_callback: called with the packed variable values after each iteration.
            loss_callback: called with the fetched `fetches` values after each evaluation.
            **run_kwargs: passed to `session.run` (options, run_metadata).

        Raises:
            ValueError: no session, or optimizer_kwargs setting what the interface sets.
        """
        if session is None:
            session = graph_mod.get_default_session()
            if session is None:
                raise ValueError("No session: pass `session` or run under "
                                 "`with sess.as_default()`.")
        feed_dict = dict(feed_dict or {})
        fetches = list(fetches or [])
        loss_grad = self._eval_func([self._loss, self._packed_loss_grad], session, feed_dict,
                                    fetches, loss_callback, run_kwargs)
        eq = [self._eval_func(t, session, feed_dict, [], None, run_kwargs)
              for t in self._equalities]
        eq_grads = [self._eval_func(t, session, feed_dict, [], None, run_kwargs)
                    for t in self._packed_equality_grads]
        ineq = [self._eval_func(t, session, feed_dict, [], None, run_kwargs)
                for t in self._inequalities]
        ineq_grads = [self._eval_func(t, session, feed_dict, [], None, run_kwargs)
                      for t in self._packed_inequality_grads]
        initial = session.run(self._packed_var, feed_dict=feed_dict, **run_kwargs)
        solution = self._minimize(np.asarray(initial), loss_grad, eq, eq_grads, ineq,
                                  ineq_grads, self._packed_bounds, step_callback,
                                  self.optimizer_kwargs)
        values = [solution[s] for s in self._packing_slices]
        session.run(self._var_updates, feed_dict=dict(zip(self._update_placeholders, values)),
                    **run_kwargs)

    def _eval_func(self, tensors, session, feed_dict, fetches, callback, run_kwargs):
        single = not isinstance(tensors, list)
        tensors = [tensors] if single else tensors
        count = len(tensors)

        def evaluate(x):
            feeds = {var: np.reshape(x[s], _shape_tuple(var))
                     for var, s in zip(self._vars, self._packing_slices)}
            feeds.update(feed_dict)
            values = session.run(tensors + fetches, feed_dict=feeds, **run_kwargs)
            if callable(callback):
                callback(*values[count:])
            return values[0] if single else values[:count]

        return evaluate

    def _minimize(self, initial_val, loss_grad_func, equality_funcs, equality_grad_funcs,
                  inequality_funcs, inequality_grad_funcs, packed_bounds, step_callback,
                  optimizer_kwargs):
        raise NotImplementedError("ExternalOptimizerInterface._minimize")


class ScipyOptimizerInterface(ExternalOptimizerInterface):
    """Wraps `scipy.optimize.minimize` (default method L-BFGS-B).

    `optimizer_kwargs` go to `scipy.optimize.minimize` (`method`, `options`, `tol`, ...);
    `bounds`, `constraints`, `jac` and `callback` are set by the interface and refused there.
    """

    _DEFAULT_METHOD = "L-BFGS-B"

    def _minimize(self, initial_val, loss_grad_func, equality_funcs, equality_grad_funcs,
                  inequality_funcs, inequality_grad_funcs, packed_bounds, step_callback,
                  optimizer_kwargs):
        def loss_grad(x):
            loss, gradient = loss_grad_func(x)
            # SciPy's L-BFGS-B (Fortran) needs float64 gradients.
            return float(loss), np.asarray(gradient, dtype=np.float64)

        kwargs = dict(optimizer_kwargs)
        method = kwargs.pop("method", self._DEFAULT_METHOD)
        refused = {"bounds": "Bounds must be set using the var_to_bounds argument",
                   "constraints": "Constraints should be passed through the equalities "
                                  "and inequalities arguments",
                   "jac": "Jacobian is computed automatically and cannot be set",
                   "callback": "Callback should be passed through the step_callback "
                               "argument of minimize"}
        for key, message in refused.items():
            if key in kwargs:
                raise ValueError(message)
        constraints = (
            [{"type": "eq", "fun": f, "jac": g}
             for f, g in zip(equality_funcs, equality_grad_funcs)]
            + [{"type": "ineq", "fun": f, "jac": g}
               for f, g in zip(inequality_funcs, inequality_grad_funcs)])
        call = {"jac": True, "callback": step_callback, "method": method,
                "bounds": packed_bounds}
        if constraints:
            call["constraints"] = constraints
        call.update(kwargs)
        result = _scipy_minimize()(loss_grad, initial_val.astype(np.float64), **call)
        lines = ["Optimization terminated with:", "  Message: %s",
                 "  Objective function value: %f"]
        args = [result.message, result.fun]
        if hasattr(result, "nit"):
            lines.append("  Number of iterations: %d")
            args.append(result.nit)
        if hasattr(result, "nfev"):
            lines.append("  Number of functions evaluations: %d")
            args.append(result.nfev)
        _LOG.info("\n".join(lines), *args)
        return result["x"]
