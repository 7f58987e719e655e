"""Einsum: values against np.einsum (explicit, implicit, ellipsis, diagonals), static shapes,
equation errors and finite-difference gradients."""

import collections

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf

Row = collections.namedtuple("Row", "op equation shapes dtype")
ROWS = [
    Row("Einsum", "ij,jk->ik", [[2, 3], [3, 4]], np.float64),
    Row("Einsum", "ij,jk", [[2, 3], [3, 4]], np.float32),
    Row("Einsum", "bij,bjk->bik", [[2, 2, 3], [2, 3, 4]], np.float32),
    Row("Einsum", "...ij,jk->...ik", [[5, 2, 3], [3, 4]], np.float64),
    Row("Einsum", "...ij,...jk->...ik", [[1, 2, 3], [4, 3, 2]], np.float64),
    Row("Einsum", "i...j,j->i...", [[2, 3, 4, 5], [5]], np.float64),
    Row("Einsum", "ii->i", [[3, 3]], np.float64),
    Row("Einsum", "ii", [[3, 3]], np.int32),
    Row("Einsum", "ij->", [[2, 3]], np.int64),
    Row("Einsum", "i,j->ij", [[2], [3]], np.complex128),
    Row("Einsum", "ij,jk,kl->il", [[2, 3], [3, 4], [4, 2]], np.float64),
    Row("Einsum", "ba", [[2, 3]], np.float64),
    Row("Einsum", "Ba,a", [[2, 3], [3]], np.float64),
    Row("Einsum", "ij, jk -> ik", [[2, 3], [3, 4]], np.float64),
]

COVERED_OPS = {row.op for row in ROWS}


def _values(shapes, dtype, seed=0):
    rng = np.random.RandomState(seed)
    out = []
    for s in shapes:
        v = rng.uniform(-2, 2, s)
        if np.issubdtype(dtype, np.complexfloating):
            v = v + 1j * rng.uniform(-2, 2, s)
        out.append(np.round(v).astype(dtype) if np.issubdtype(dtype, np.integer)
                   else v.astype(dtype))
    return out


@pytest.mark.parametrize("row", ROWS, ids=[r.equation for r in ROWS])
def test_row(row):
    values = _values(row.shapes, row.dtype)
    out = tf.einsum(row.equation, *values)
    with tf.Session() as sess:
        value = sess.run(out)
    expected = np.einsum(row.equation.replace(" ", ""), *values)
    assert out.op.type == "Einsum" and out.op.name.startswith("einsum")
    assert value.dtype == row.dtype
    assert out.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(value, expected, rtol=1e-5)


def test_placeholders_and_partial_shapes():
    a = tf.placeholder(tf.float32, [None, 3])
    b = tf.placeholder(tf.float32, [3, None])
    assert tf.einsum("ij,jk->ik", a, b).shape.as_list() == [None, None]
    assert tf.einsum("ij,jk->ki", a, tf.zeros([3, 7])).shape.as_list() == [7, None]
    unknown = tf.placeholder(tf.float32)
    assert tf.einsum("...i,i->...", unknown, tf.zeros([3])).shape.ndims is None
    assert tf.einsum("ij,j->i", unknown, tf.zeros([3])).shape.as_list() == [None]
    out = tf.einsum("...ij,jk->...ik", tf.placeholder(tf.float32, [None, 2, 3]), b)
    assert out.shape.as_list() == [None, 2, None]


def test_equation_errors():
    x, y = np.ones((2, 3)), np.ones((4, 4))
    with pytest.raises(ValueError, match="Einsum.*Dimensions must be equal, but are 3 and 4"):
        tf.einsum("ij,jk->ik", x, y)
    with pytest.raises(ValueError, match="label z not present"):
        tf.einsum("ij,jk->iz", x, np.ones((3, 4)))
    with pytest.raises(ValueError, match="incorrect format"):
        tf.einsum("i1,jk->ik", x, y)
    with pytest.raises(ValueError, match="Got 2 inputs"):
        tf.einsum("ij->ij", x, y)
    with pytest.raises(ValueError, match="more than once"):
        tf.einsum("ij->ii", x)
    with pytest.raises(ValueError, match="rank 3 but is rank 2"):
        tf.einsum("ijk,jk->ik", x, y)
    with pytest.raises(ValueError, match="no ellipsis"):
        tf.einsum("...ij->ij", np.ones((5, 2, 3)))
    with pytest.raises(TypeError):
        tf.einsum("ij->ji", x, nme="typo")


def test_raw_op_repeated_output_labels_fill_generalized_diagonals():
    vec = np.array([2.0, -3.0, 5.0])
    out = tf.Session().run(tf.raw_ops.Einsum(inputs=[vec], equation="b->bb"))
    np.testing.assert_array_equal(out, np.diag(vec))
    a, b = np.arange(6.0).reshape(3, 2), np.arange(8.0).reshape(2, 4)
    out = tf.Session().run(tf.raw_ops.Einsum(inputs=[a, b], equation="ij,jk->kiik"))
    assert out.shape == (4, 3, 3, 4)
    expected = np.zeros((4, 3, 3, 4))
    for i in range(3):
        for k in range(4):
            expected[k, i, i, k] = (a @ b)[i, k]
    np.testing.assert_allclose(out, expected)
    # with an ellipsis between the repeats, and zero-sized labels
    batch = np.arange(12.0).reshape(2, 2, 3)
    out = tf.Session().run(tf.raw_ops.Einsum(inputs=[batch], equation="...ij->j...j"))
    assert out.shape == (3, 2, 3)
    np.testing.assert_allclose(np.einsum("j...j->...j", out), batch.sum(axis=1))
    empty = tf.raw_ops.Einsum(inputs=[np.ones((0, 5)), np.ones((5, 2))], equation="ab,bc->aca")
    assert tf.Session().run(empty).shape == (0, 2, 0)


def test_output_ellipsis_without_input_ellipsis_is_empty():
    scalar = tf.raw_ops.Einsum(inputs=[np.float32(4.0)], equation="->...")
    assert scalar.shape.as_list() == []
    assert tf.Session().run(scalar) == 4.0
    np.testing.assert_allclose(tf.Session().run(tf.einsum("ij->...j", np.ones((2, 3)))),
                               [2.0, 2.0, 2.0])


_LABELS = "abcd"


@st.composite
def _equations(draw):
    sizes = {c: draw(st.integers(1, 3)) for c in _LABELS}
    n = draw(st.integers(1, 3))
    terms = [draw(st.lists(st.sampled_from(_LABELS), min_size=0, max_size=3, unique=True))
             for _ in range(n)]
    used = sorted(set("".join("".join(t) for t in terms)))
    out = draw(st.permutations(used))[:draw(st.integers(0, len(used)))]
    equation = ",".join("".join(t) for t in terms) + "->" + "".join(out)
    shapes = [[sizes[c] for c in t] for t in terms]
    return equation, shapes


@settings(max_examples=30, deadline=None)
@given(_equations())
def test_random_equations_match_numpy(case):
    equation, shapes = case
    values = _values(shapes, np.float64, seed=len(equation))
    with tf.Graph().as_default():
        out = tf.einsum(equation, *values)
        with tf.Session() as sess:
            value = sess.run(out)
    np.testing.assert_allclose(value, np.einsum(equation, *values), rtol=1e-10, atol=1e-12)
    assert out.shape.as_list() == list(np.shape(value))


@settings(max_examples=10, deadline=None)
@given(_equations())
def test_random_equation_gradients_match_numpy(case):
    equation, shapes = case
    values = _values(shapes, np.float64, seed=1)
    with tf.Graph().as_default():
        xs = [tf.constant(v) for v in values]
        out = tf.einsum(equation, *xs)
        grads = tf.gradients(tf.reduce_sum(out), xs)
        with tf.Session() as sess:
            got = sess.run(grads)
    for i, value in enumerate(values):
        # einsum is linear in each operand: the gradient of sum(out) at each element of x_i is
        # the sum of the einsum with x_i replaced by that element's indicator.
        expected = np.zeros(value.shape)
        for k in range(value.size):
            basis = np.zeros(value.size)
            basis[k] = 1.0
            operands = values[:i] + [basis.reshape(value.shape)] + values[i + 1:]
            expected.flat[k] = np.einsum(equation, *operands).sum()
        np.testing.assert_allclose(got[i], expected, rtol=1e-10, atol=1e-12)


# -- gradients -----------------------------------------------------------------------------------

def _case(equation, *shapes, seed=0):
    def build(tf):
        rng = np.random.RandomState(seed)
        xs = [tf.placeholder(tf.float64, s) for s in shapes]
        values = [rng.uniform(-1, 1, s) for s in shapes]
        return tf.einsum(equation, *xs), xs, values

    return build


GRADIENT_CASES = [
    ("Einsum", _case("ij,jk->ik", [2, 3], [3, 4])),
    ("Einsum", _case("bij,bkj->bki", [2, 2, 3], [2, 4, 3])),
    ("Einsum", _case("ii->i", [3, 3])),
    ("Einsum", _case("iij,k->jk", [2, 2, 3], [2])),
    ("Einsum", _case("ij->", [2, 3])),
    ("Einsum", _case("...ij,jk->...ik", [2, 2, 3], [3, 2])),
    ("Einsum", _case("...ij,...jk->...ik", [1, 2, 3], [2, 3, 2])),
    ("Einsum", _case("i...j,j->i...", [2, 1, 3, 2], [2])),
    ("Einsum", _case("i...,i...->...", [2, 3], [2, 1])),
    ("Einsum", _case("ij,jk,kl->il", [2, 3], [3, 2], [2, 2])),
]
