"""Einsum: Einstein summation over N operands (`tf.einsum`).

The equation `"ij,jk->ik"` names each operand's axes with letters (`...` stands for broadcast
batch axes); labels missing from the output are summed. The op's `equation` attr is always
explicit (`tf.einsum` fills in the implicit output the way NumPy does). The gradient of operand
i is itself an einsum of the output gradient with the other operands; labels that were summed
within operand i alone, and repeated labels (diagonals), are restored with ones and identity
operands. The raw op also takes repeated output labels (`a->aa` builds a diagonal matrix: the
adjoint of a trace), which `tf.einsum` itself rejects as TF 1.x does.
"""

from __future__ import annotations

import re

import numpy as np

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.array.constants import ones
from tensorflux.ops.array.diagonal import eye
from tensorflux.ops.array.shapes import shape as shape_of
from tensorflux.ops.array.shapes import transpose
from tensorflux.ops.math.broadcast_gradient import unbroadcast

__all__ = ["einsum"]

_TERM = re.compile(r"^[a-zA-Z]*(\.\.\.)?[a-zA-Z]*$")
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

Einsum = define_op(
    "Einsum", inputs=["inputs: N * T"], outputs=["output: T"],
    attrs=["equation: string", "N: int >= 1",
           "T: {bfloat16, float16, float32, float64, int32, int64, complex64, complex128}"])


def _split_term(term: str):
    """(labels before '...', has ellipsis, labels after '...')."""
    if "..." in term:
        before, after = term.split("...")
        return before, True, after
    return term, False, ""


def parse_equation(equation: str, num_inputs: int | None = None):
    """(input terms, output term) of an einsum equation; implicit outputs are filled in."""
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        raise ValueError(f"Expecting at most one '->' in einsum equation: {equation}")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    for term in terms + ([out] if arrow else []):
        if not _TERM.match(term):
            raise ValueError(f"Subscripts have incorrect format: {equation}")
    if num_inputs is not None and len(terms) != num_inputs:
        raise ValueError(f"Got {num_inputs} inputs for equation \"{equation}\", expecting "
                         f"{len(terms)}")
    labels = "".join(t.replace("...", "") for t in terms)
    if not arrow:
        once = sorted(c for c in set(labels) if labels.count(c) == 1)
        out = ("..." if any("..." in t for t in terms) else "") + "".join(once)
    for c in out.replace("...", ""):
        if c not in labels:
            raise ValueError(f"Output subscripts contain the label {c} not present in the "
                             f"input subscripts.")
    if "..." in out and not any("..." in t for t in terms):
        out = out.replace("...", "")  # an ellipsis no input has broadcasts to no axes
    return terms, out


def _first_occurrences(out: str) -> str:
    """The output term with each repeated label kept at its first place only."""
    before, has_ellipsis, after = _split_term(out)
    seen = set()
    kept = []
    for part in (before, after):
        kept.append("".join(c for c in part if not (c in seen or seen.add(c))))
    return kept[0] + ("..." if has_ellipsis else "") + kept[1]


def _embed_diagonals(result: np.ndarray, unique: str, out: str) -> np.ndarray:
    """`result` (axes `unique`) placed on the generalized diagonals of `out`: an output label
    repeated k times puts the values where those k indices are equal, zeros elsewhere."""
    axes = dict(_label_axes(unique, result.ndim))
    rank = result.ndim
    u_before, has_ellipsis, _ = _split_term(unique)
    before, _, after = _split_term(out)
    ell = rank - len(unique.replace("...", ""))
    sources = ([axes[c] for c in before]
               + (list(range(len(u_before), len(u_before) + ell)) if has_ellipsis else [])
               + [axes[c] for c in after])
    full = np.zeros([result.shape[a] for a in sources], dtype=result.dtype)
    index = tuple(np.arange(result.shape[a]).reshape([-1 if i == a else 1
                                                      for i in range(rank)])
                  for a in sources)
    full[index] = result
    return full


def _label_axes(term: str, rank: int):
    """[(label, axis)] for a term applied to a tensor of known rank; axis counts from 0."""
    before, _, after = _split_term(term)
    return ([(c, i) for i, c in enumerate(before)]
            + [(c, rank - len(after) + i) for i, c in enumerate(after)])


@Einsum.shape_fn
def _einsum_shape(inputs, *, equation):
    terms, out = parse_equation(equation, len(inputs))
    dims: dict = {}
    ellipsis = TensorShape([])
    for index, (term, shape) in enumerate(zip(terms, inputs)):
        before, has_ellipsis, after = _split_term(term)
        fixed = len(before) + len(after)
        if shape.ndims is None:
            if has_ellipsis:
                ellipsis = TensorShape(None)
            for c in before + after:
                dims.setdefault(c, None)
            continue
        if (not has_ellipsis and shape.ndims != fixed) or shape.ndims < fixed:
            raise ValueError(f"Shape must be rank {fixed} but is rank {shape.ndims} for input "
                             f"{index} and equation: {equation}")
        for c, axis in _label_axes(term, shape.ndims):
            d, known = shape._dim_list[axis], dims.get(c)
            if d is not None and known is not None and d != known:
                raise ValueError(f"Dimensions must be equal, but are {known} and {d} for label "
                                 f"'{c}' in equation {equation}")
            dims[c] = d if d is not None else known
        if has_ellipsis:
            ellipsis = broadcast_shape(ellipsis,
                                       TensorShape(shape._dim_list[len(before):shape.ndims
                                                              - len(after)]))
    before, has_ellipsis, after = _split_term(out)
    if not has_ellipsis:
        if ellipsis.ndims:
            raise ValueError(f"Output subscripts of einsum equation '{equation}' have no "
                             f"ellipsis (...) but the inputs have non-empty broadcasting "
                             f"shape {ellipsis}")
        return TensorShape([dims[c] for c in before])
    if ellipsis.ndims is None:
        return TensorShape(None)
    return TensorShape([dims[c] for c in before] + list(ellipsis._dim_list)
                       + [dims[c] for c in after])


@Einsum.kernel(factory=True)
def _einsum_factory(equation, N):
    terms, out = parse_equation(equation, N)
    unique = _first_occurrences(out)
    explicit = ",".join(terms) + "->" + unique

    def einsum_kernel(*inputs):
        # NOTE: NumPy's contraction planner (BLAS, pairwise order) costs ~20 us per call; it
        # pays off for three or more operands or once the operands are not tiny.
        optimize = N > 2 or sum(x.size for x in inputs) > 2048
        result = np.asarray(np.einsum(explicit, *inputs, optimize=optimize),
                            dtype=inputs[0].dtype)
        if unique != out:
            result = _embed_diagonals(result, unique, out)
        return result

    return einsum_kernel


def einsum(equation, *inputs, **kwargs):
    """Einstein summation, e.g. `tf.einsum('ij,jk->ik', a, b)` is a matrix product.

    Args:
        equation: subscripts per operand separated by commas, optionally `->` and the output
            subscripts (implicit output: the labels that appear once, sorted). `...` names
            broadcast batch axes.
        *inputs: the operands (one per term).
        name: name scope (default "einsum").

    Returns:
        The contraction, a tensor with the output subscripts' axes.

    Raises:
        ValueError: malformed equation, wrong number of operands, or dimensions that differ.

    Example:
        >>> tf.einsum('bij,bjk->bik', x, y)   # batched matmul
    """
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"invalid keyword arguments for einsum: {sorted(kwargs)}")
    terms, out = parse_equation(equation, len(inputs))
    out_labels = out.replace("...", "")
    if len(set(out_labels)) != len(out_labels):  # only the raw op embeds diagonals
        raise ValueError(f"Output subscripts contain a label appearing more than once: "
                         f"{equation}")
    with graph_mod.get_default_graph().name_scope(name or "einsum"):
        return Einsum(list(inputs), equation=",".join(terms) + "->" + out)


# -- gradient ---------------------------------------------------------------------------------

def _dim(x, axis):
    """x's size along `axis`: a Python int when static, else a scalar tensor."""

    d = x.shape._dim_list[axis] if x.shape.ndims is not None else None
    return d if d is not None else shape_of(x)[axis]


def _operand_grad(grad, out_term, x, term, others):
    """The gradient of one operand: einsum(grad, others, ones/identities) -> term."""

    rank = x.shape.ndims
    if rank is None:
        raise ValueError(f"Einsum gradient needs operands of known rank, got {x.shape}")
    used = set("".join(t for t, _ in others) + out_term + term)
    fresh = iter(c for c in _LETTERS if c not in used)
    available = set(out_term.replace("...", "") + "".join(t for t, _ in others))
    terms, operands = [out_term], [grad]
    for t, tensor in others:
        terms.append(t)
        operands.append(tensor)
    seen, target = set(), []
    for c, axis in _label_axes(term, rank):
        if c in seen:  # a repeated label: a diagonal, restored with an identity operand
            new = next(fresh)
            terms.append(c + new)
            operands.append(eye(_dim(x, axis), dtype=x.dtype))
            target.append((axis, new))
            continue
        seen.add(c)
        target.append((axis, c))
        if c not in available:  # summed within x alone: broadcast back with ones
            terms.append(c)
            operands.append(ones([_dim(x, axis)], dtype=x.dtype))
            available.add(c)
    before, has_ellipsis, after = _split_term(term)
    if has_ellipsis:
        start, stop = len(before), rank - len(after)
        ell = TensorShape(x.shape._dim_list[start:stop])
        ell_shape = ell.as_list() if ell.is_fully_defined() else shape_of(x)[start:stop]
        terms.append("...")
        operands.append(ones(ell_shape, dtype=x.dtype))
    # The result puts the ellipsis first, so broadcast batch axes reduce like NumPy's (an
    # operand without one gets the gradient's batch axes summed away by `unbroadcast`).
    labels = "".join(c for _, c in sorted(target))
    batched = any("..." in t for t in terms)
    result = Einsum(operands, equation=",".join(terms) + "->" + ("..." if batched else "")
                    + labels)
    if not batched:
        return result
    if not before or not has_ellipsis:
        return unbroadcast(result, x)
    perm = list(range(start, stop)) + list(range(start)) + list(range(stop, rank))
    result = unbroadcast(result, transpose(x, perm))
    return transpose(result, [int(i) for i in np.argsort(perm)])


@Einsum.gradient
def _einsum_grad(op, grad):
    terms, out = parse_equation(op.get_attr_str("equation"), len(op.inputs))
    inputs = list(op.inputs)
    grads = []
    for i, (term, x) in enumerate(zip(terms, inputs)):
        others = [(t, y) for j, (t, y) in enumerate(zip(terms, inputs)) if j != i]
        grads.append(_operand_grad(grad, out, x, term, others))
    return grads
