"""`tf.raw_ops`: keyword-only functions per registered op, values against NumPy, list inputs with
inferred `N`, multi-output namedtuples, attr errors, and gradients through raw-op graphs."""

import inspect

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework.op_def import OP_DEFS

R = tf.raw_ops
RNG = np.random.RandomState(7)
A = RNG.uniform(-2, 2, [3, 4]).astype(np.float32)
B = RNG.uniform(-2, 2, [4, 5]).astype(np.float32)
P = RNG.uniform(0.5, 2, [3, 4]).astype(np.float32)


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


VALUE_TABLE = [
    ("Add", lambda: R.Add(x=A, y=P), A + P),
    ("Sub", lambda: R.Sub(x=A, y=P), A - P),
    ("Mul", lambda: R.Mul(x=A, y=P), A * P),
    ("RealDiv", lambda: R.RealDiv(x=A, y=P), A / P),
    ("MatMul", lambda: R.MatMul(a=A, b=B), A @ B),
    ("MatMul transpose", lambda: R.MatMul(a=A, b=A, transpose_b=True), A @ A.T),
    ("Exp", lambda: R.Exp(x=A), np.exp(A)),
    ("Sqrt", lambda: R.Sqrt(x=P), np.sqrt(P)),
    ("Relu", lambda: R.Relu(features=A), np.maximum(A, 0)),
    ("Softmax", lambda: R.Softmax(logits=A),
     np.exp(A) / np.exp(A).sum(1, keepdims=True)),
    ("Sum axis", lambda: R.Sum(input=A, axis=[1], keep_dims=True), A.sum(1, keepdims=True)),
    ("Max", lambda: R.Max(input=A, axis=0), A.max(0)),
    ("Transpose", lambda: R.Transpose(x=A, perm=[1, 0]), A.T),
    ("Reshape", lambda: R.Reshape(tensor=A, shape=[2, 6]), A.reshape(2, 6)),
    ("Cast", lambda: R.Cast(x=A, DstT=tf.int32), A.astype(np.int32)),
    ("ExpandDims", lambda: R.ExpandDims(input=A, axis=1), A[:, None]),
    ("Select", lambda: R.Select(condition=A > 0, x=A, y=P), np.where(A > 0, A, P)),
    ("Tile", lambda: R.Tile(input=A, multiples=[2, 1]), np.tile(A, [2, 1])),
    ("Fill", lambda: R.Fill(dims=[2, 3], value=1.5), np.full([2, 3], 1.5, np.float32)),
]


@pytest.mark.parametrize("build,expected", [r[1:] for r in VALUE_TABLE],
                         ids=[r[0] for r in VALUE_TABLE])
def test_raw_op_values(build, expected):
    out = build()
    got = run(out)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_list_inputs_infer_n():
    add_n = R.AddN(inputs=[A, P, A])
    concat = R.ConcatV2(values=[A, P], axis=0)
    pack = R.Pack(values=[A, P], axis=1)
    assert add_n.op.get_attr("N") == 3 and concat.op.get_attr("N") == 2
    got = run([add_n, concat, pack])
    np.testing.assert_allclose(got[0], A + P + A, rtol=1e-6)
    np.testing.assert_array_equal(got[1], np.concatenate([A, P], 0))
    np.testing.assert_array_equal(got[2], np.stack([A, P], 1))


def test_multi_output_namedtuple_and_list_output():
    unique = R.Unique(x=[3, 1, 3, 2, 1])
    assert type(unique).__name__ == "Unique" and unique._fields == ("y", "idx")
    y, idx = run([unique.y, unique.idx])
    np.testing.assert_array_equal(y, [3, 1, 2])
    np.testing.assert_array_equal(idx, [0, 1, 0, 2, 1])
    top = R.TopKV2(input=[1.0, 4.0, 2.0], k=2)
    np.testing.assert_array_equal(run(top.indices), [1, 2])
    parts = R.Split(axis=1, value=A, num_split=2)
    assert isinstance(parts, list) and len(parts) == 2
    np.testing.assert_array_equal(run(parts[1]), A[:, 2:])


def test_no_output_op_returns_operation_and_names():
    op = R.NoOp(name="nothing")
    assert isinstance(op, tf.Operation) and op.name == "nothing" and op.type == "NoOp"
    assert R.Add(x=1.0, y=2.0, name="plus").name == "plus:0"


def test_positional_and_unknown_arguments_raise():
    with pytest.raises(TypeError, match=r"Add only takes keyword args \(possible keys: "
                                        r"\['x', 'y', 'name'\]\)"):
        R.Add(1.0, 2.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        R.Add(x=1.0, y=2.0, z=3.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'N'"):
        R.AddN(inputs=[A, A], N=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'T'"):
        R.Add(x=1.0, y=2.0, T=tf.float32)
    with pytest.raises(TypeError, match="missing 1 required keyword argument: 'y'"):
        R.Add(x=1.0)
    with pytest.raises(TypeError, match="missing 1 required keyword argument: 'num'"):
        R.Unpack(value=[1.0, 2.0])
    with pytest.raises(TypeError, match="Input 'y' of 'Add' Op.*int32"):
        R.Add(x=tf.constant(1.0), y=tf.constant(2))


def test_attr_errors():
    with pytest.raises(TypeError, match="transpose_a.*expected a bool, got 3"):
        R.MatMul(a=A, b=B, transpose_a=3)
    with pytest.raises(TypeError, match="DstT"):
        R.Cast(x=A, DstT="bogus")
    with pytest.raises(ValueError, match="padding"):
        R.Conv2D(input=np.zeros([1, 3, 3, 1], np.float32), filter=np.zeros([1, 1, 1, 1],
                 np.float32), strides=[1, 1, 1, 1], padding="FULL")
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        R.MatMul(a=A, b=A)


def test_gradients_flow_through_raw_ops():
    a = tf.placeholder(tf.float64, [3, 4])
    b = tf.placeholder(tf.float64, [4, 5])
    loss = R.Sum(input=R.Square(x=R.MatMul(a=a, b=b)), axis=[0, 1])
    ga, gb = tf.gradients(loss, [a, b])
    av, bv = A.astype(np.float64), B.astype(np.float64)
    got_a, got_b = run([ga, gb], {a: av, b: bv})
    np.testing.assert_allclose(got_a, 2 * (av @ bv) @ bv.T, rtol=1e-10)
    np.testing.assert_allclose(got_b, av.T @ (2 * (av @ bv)), rtol=1e-10)


def test_namespace_listing_and_internal_ops():
    names = dir(R)
    public = {n for n in OP_DEFS.keys() if not n.startswith("_")}
    assert set(names) == public and names == sorted(names)
    assert {"MatMul", "AddN", "ConcatV2", "Unique", "NoOp"} <= set(names)
    for internal in ("_Recv", "_Send", "_Arg", "_Retval", "_FusedMatMul"):
        assert internal in OP_DEFS and internal not in names
        assert not hasattr(R, internal)
    with pytest.raises(AttributeError, match="Did you mean 'MatMul'"):
        R.MatMull  # noqa: B018
    assert tf.compat.v1.raw_ops is R
    assert R.MatMul is R.MatMul  # built once


def test_signature_is_keyword_only_with_defaults():
    sig = inspect.signature(R.MatMul)
    assert list(sig.parameters) == ["a", "b", "transpose_a", "transpose_b", "name"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in sig.parameters.values())
    assert sig.parameters["transpose_a"].default is False
    assert sig.parameters["a"].default is inspect.Parameter.empty
    assert list(inspect.signature(R.Sum).parameters) == ["input", "axis", "keep_dims", "name"]
    assert "T" not in inspect.signature(R.Add).parameters
    assert "DstT" in inspect.signature(R.Cast).parameters


def test_every_exposed_op_builds_a_signature():
    for name in dir(R):
        fn = getattr(R, name)
        params = inspect.signature(fn).parameters
        op_def = fn.op_def
        assert "name" in params and len(params) >= len(op_def.inputs) + 1, name
