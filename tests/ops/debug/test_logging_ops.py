"""Assert, CheckNumerics, Print, tf.print and the tf.assert_* checks."""

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensorflux as tf
from tensorflux.ops.debug.logging import summarize_value, summarize_value_v2

COVERED_OPS = {"Assert", "CheckNumerics", "Print", "PrintV2"}


def _check_numerics_case(tf):
    x = tf.placeholder(tf.float64, [2, 3])
    return tf.check_numerics(x, "values"), [x], [np.linspace(-1.0, 2.0, 6).reshape(2, 3)]


def _print_case(tf):
    x = tf.placeholder(tf.float64, [3])
    y = tf.placeholder(tf.float64, [2])
    return tf.Print(x, [y], "shown: ", first_n=0), [x, y], [np.array([1.0, -2.0, 0.5]),
                                                          np.array([3.0, 4.0])]


GRADIENT_CASES = [("CheckNumerics", _check_numerics_case), ("Print", _print_case)]


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


# -- summaries (strings observed from TensorFlow) --------------------------------------------

@pytest.mark.parametrize("value,summarize,text", [
    (np.array([[1, 2, 3], [4, 5, 6]]), 3, "[1 2 3]..."),
    (np.arange(10.0), 3, "0 1 2..."),
    (np.float32(3.5), 3, "3.5"),
    (np.array([True, False]), 3, "1 0"),
    (np.array([b"a", b"bc"], dtype=object), 3, "a bc"),
    (np.zeros((2, 0)), 3, ""),
    (np.arange(24).reshape(2, 3, 4), 20,
     "[[0 1 2 3][4 5 6 7][8 9 10 11]][[12 13 14 15][16 17 18 19]]..."),
    (np.arange(24).reshape(2, 3, 4), 3, "[[0 1 2...]]..."),
    (np.arange(6).reshape(2, 3), -1, "[0 1 2][3 4 5]"),
    (np.arange(5), 0, "..."),
    (np.float32(1 / 3), 3, "0.333333343"),
    (np.float32(1e20), 3, "1e+20"),
    (np.float16(0.1), 3, "0.0999755859"),
    (np.float64(0.1), 3, "0.1"),
    (np.float64(1 / 3), 3, "0.33333333333333331"),
    (np.array([np.nan, np.inf, -np.inf, 1e-7, 123456789.0], np.float32), 10,
     "nan inf -inf 1e-07 123456792"),
    (np.array([1 + 2j], np.complex64), 3, "?"),
    (np.array([-3], np.int8), 3, "-3"),
])
def test_summarize_value_matches_tensorflow(value, summarize, text):
    assert summarize_value(value, summarize) == text


@pytest.mark.parametrize("value,summarize,text", [
    (np.arange(10), 3, "[0 1 2 ... 7 8 9]"),
    (np.arange(7), 3, "[0 1 2 ... 4 5 6]"),
    (np.arange(12).reshape(3, 4), 1, "[[0 ... 3]\n ...\n [8 ... 11]]"),
    (np.arange(24).reshape(2, 3, 4), 1,
     "[[[0 ... 3]\n  ...\n  [8 ... 11]]\n\n [[12 ... 15]\n  ...\n  [20 ... 23]]]"),
    (np.zeros((2, 0)), 3, "[\n ...]"),
    (np.array([b'a"b\n'], dtype=object), 3, '["a\\"b\\n"]'),
    (np.array(b"str", dtype=object), 3, '"str"'),
    (np.float64([1 / 3, 1e-9]), 3, "[0.33333333333333331 1e-09]"),
    (np.arange(12).reshape(3, 4), -1, "[[0 1 2 3]\n [4 5 6 7]\n [8 9 10 11]]"),
])
def test_summarize_value_v2_matches_tensorflow(value, summarize, text):
    assert summarize_value_v2(value, summarize) == text


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                  elements=st.integers(-99, 99)))
def test_summaries_show_everything_when_asked(value):
    expected = [str(v) for v in value.reshape(-1)]
    assert summarize_value(value, -1).replace("[", " ").replace("]", " ").split() == expected
    assert summarize_value_v2(value, -1).replace("[", " ").replace("]", " ").split() == expected


# -- Assert ----------------------------------------------------------------------------------

def test_assert_passes_and_fails_with_tensorflow_message(graph):
    x = tf.placeholder(tf.float32, name="x")
    check = tf.Assert(tf.constant(True), ["ok", x])
    assert isinstance(check, tf.Operation) and check.type == "Assert"
    assert check.name == "Assert/Assert"
    assert _run(check, {x: 1.0}) is None
    data = ["msg", tf.constant([[1, 2, 3], [4, 5, 6]]), tf.constant(np.arange(10.0)),
            tf.constant(3.5), tf.constant([True, False]), tf.constant([b"a", b"bc"]),
            tf.constant(np.zeros((2, 0)))]
    failing = tf.Assert(False, data, summarize=3)
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        _run(failing)
    expected = "assertion failed: [msg] [[1 2 3]...] [0 1 2...] [3.5] [1 0] [a bc] []"
    assert expected in str(info.value)


def test_assert_as_control_dependency_and_condition_shape(graph):
    x = tf.placeholder(tf.int32, [])
    check = tf.Assert(tf.cast(x, tf.bool), [x], name="nonzero")
    with tf.control_dependencies([check]):
        y = tf.identity(x)
    assert _run(y, {x: 3}) == 3
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"assertion failed: \[0\]"):
        _run(y, {x: 0})
    cond = tf.placeholder(tf.bool)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"In\[0\] should be a scalar"):
        _run(tf.Assert(cond, [1]), {cond: [True, False]})


# -- CheckNumerics ---------------------------------------------------------------------------

@pytest.mark.parametrize("values,what", [([1.0, np.nan], "NaN"), ([1.0, np.inf], "Inf"),
                                         ([np.nan, -np.inf], "Inf and NaN")])
def test_check_numerics_messages(graph, values, what):
    for dtype in (tf.float16, tf.float32, tf.float64):
        out = tf.check_numerics(tf.constant(values, dtype), "where")
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=f"where : Tensor had {what} values"):
            _run(out)


def test_check_numerics_passes_finite_values_through(graph):
    values = np.array([3e38, 3e38, -1.0], np.float32)  # the sum overflows; the values are fine
    out = tf.check_numerics(values, "big")
    assert out.op.type == "CheckNumerics" and out.shape.as_list() == [3]
    np.testing.assert_array_equal(_run(out), values)


def test_check_numerics_gradient_checks_the_gradient(graph):
    x = tf.placeholder(tf.float32, [2])
    y = tf.check_numerics(x, "fwd") * tf.constant([1.0, np.inf])
    (grad,) = tf.gradients(y, [x])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="detected in gradient. fwd : Tensor had Inf values"):
        _run(grad, {x: [1.0, 2.0]})


def test_add_check_numerics_ops_names_the_tensor(graph):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.multiply(x, 2.0, name="double")
    checks = tf.add_check_numerics_ops()
    assert _run([y, checks], {x: [1.0, 2.0]})[1] is None
    with pytest.raises(tf.errors.InvalidArgumentError, match="x:0 : Tensor had NaN values"):
        _run(checks, {x: [np.nan, 2.0]})


# -- Print and tf.print ----------------------------------------------------------------------

def test_print_first_n_and_passthrough(graph, capsys):
    value = tf.Print(tf.constant(1.0), [tf.constant([1, 2, 3, 4]), tf.constant("s")], "msg: ",
                     first_n=2, summarize=2)
    assert value.op.type == "Print" and value.dtype == tf.float32
    with tf.Session() as sess:
        results = [sess.run(value) for _ in range(3)]
    assert results == [1.0, 1.0, 1.0]
    assert capsys.readouterr().err == "msg: [1 2...][s]\nmsg: [1 2...][s]\n"


def test_print_v2_formats_structures(graph, capsys):
    op = tf.print("hello", tf.constant([1, 2]), {"a": tf.constant(1)}, [1, "x"], 3.5,
                  output_stream=sys.stdout, sep="|", end="!\n")
    assert op.type == "PrintV2"
    assert op.inputs[0].op.get_attr_str("template") == "hello|{}|{'a': {}}|[1, 'x']|3.5"
    _run(op)
    assert capsys.readouterr().out == "hello|[1 2]|{'a': 1}|[1, 'x']|3.5!\n"
    _run(tf.print(tf.constant("raw"), summarize=-1))
    _run(tf.print(tf.constant("quoted"), tf.constant(np.arange(8)), summarize=2))
    assert capsys.readouterr().err == 'raw\n"quoted" [0 1 ... 6 7]\n'


def test_print_v2_to_file_and_bad_stream(graph, tmp_path):
    target = tmp_path / "log.txt"
    op = tf.print("value:", tf.constant(2.5), output_stream=f"file://{target}")
    _run(op)
    _run(op)
    assert target.read_text() == "value: 2.5\nvalue: 2.5\n"
    with pytest.raises(ValueError, match="Unsupported output stream"):
        tf.print("x", output_stream=object())
    with pytest.raises(ValueError, match="Unrecognized keyword arguments"):
        tf.print("x", colour="red")


def test_print_v2_placeholder_avoids_literal_braces(graph, capsys):
    _run(tf.print("{}", tf.constant(7), output_stream=sys.stdout))
    assert capsys.readouterr().out == "{} 7\n"


# -- tf.assert_* -----------------------------------------------------------------------------

def test_static_value_checks_raise_while_building(graph):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.assert_equal([1, 2], [1, 3], message="hey")
    lines = str(info.value).split("\n")
    assert lines[0] == "hey" and lines[1] == "Condition x == y did not hold element-wise:"
    assert lines[3] == "[1 2]" and lines[5] == "[1 3]"
    with pytest.raises(tf.errors.InvalidArgumentError, match="Condition x < 0"):
        tf.assert_negative([1, -2])
    for check, good, bad in ((tf.assert_none_equal, ([1, 2], [2, 1]), ([1, 2], [1, 3])),
                             (tf.assert_less, (1, 2), (2, 2)),
                             (tf.assert_less_equal, (2, 2), (3, 2)),
                             (tf.assert_greater, (3, 2), (2, 2)),
                             (tf.assert_greater_equal, (2, 2), (1, 2))):
        with pytest.raises(tf.errors.InvalidArgumentError, match="did not hold element-wise"):
            check(*bad)
        assert _run(check(*good)) is None


def test_dynamic_value_checks_fail_at_run_time(graph):
    x = tf.placeholder(tf.float32, name="xx")
    check = tf.assert_less(x, 5.0)
    assert _run(check, {x: [1.0, 4.0]}) is None
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        _run(check, {x: [1.0, 7.0]})
    assert ("assertion failed: [Condition x < y did not hold element-wise:] [x (xx:0) = ] "
            "[1 7] [y (assert_less/y:0) = ] [5]") in str(info.value)
    positive = tf.assert_positive(x, message="must be pos")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"\[must be pos.  \] \[Condition x > 0 did not hold"):
        _run(positive, {x: [1.0, -7.0]})
    for check, good, bad in ((tf.assert_negative, -1.0, 0.0),
                             (tf.assert_non_negative, 0.0, -1.0),
                             (tf.assert_non_positive, 0.0, 1.0)):
        op = check(x)
        assert _run(op, {x: [good]}) is None
        with pytest.raises(tf.errors.InvalidArgumentError):
            _run(op, {x: [bad]})


def test_assert_equal_same_tensor_is_a_no_op(graph):
    x = tf.placeholder(tf.float32)
    assert tf.assert_equal(x, x).type == "NoOp"


def test_rank_checks(graph):
    with pytest.raises(ValueError, match=r"Tensor Const:0 must have rank 2.  Received rank 1, "
                                         r"shape \(2,\)"):
        tf.assert_rank(tf.constant([1, 2]), 2)
    with pytest.raises(ValueError, match="m.  Tensor .* must have rank at least 2"):
        tf.assert_rank_at_least(tf.constant([1, 2]), 2, message="m")
    ok = tf.assert_rank(tf.constant([1, 2]), 1)
    assert ok.type == "NoOp" and ok.name.endswith("static_checks_determined_all_ok")
    p = tf.placeholder(tf.float32)
    check = tf.assert_rank(p, 2)
    assert _run(check, {p: [[1.0]]}) is None
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"must have rank\] \[2\]"):
        _run(check, {p: [1.0]})
    at_least = tf.assert_rank_at_least(p, 1)
    assert _run(at_least, {p: [[1.0]]}) is None
    with pytest.raises(tf.errors.InvalidArgumentError):
        _run(at_least, {p: 1.0})


def test_type_and_scalar_checks(graph):
    with pytest.raises(TypeError, match="must be of type tf.float32; got tf.int32"):
        tf.assert_type(tf.constant(1), tf.float32)
    assert tf.assert_type(tf.constant(1.0), tf.float32).type == "NoOp"
    with pytest.raises(TypeError, match='Expected "x" to be integer type'):
        tf.assert_integer(tf.constant(1.0))
    assert tf.assert_integer(tf.constant(1)).type == "NoOp"
    with pytest.raises(ValueError, match=r"Expected scalar shape for .*, saw shape: \(1,\)"):
        tf.assert_scalar(tf.constant([1.0]))
    with pytest.raises(ValueError, match="saw shape: <unknown>"):
        tf.assert_scalar(tf.placeholder(tf.float32))
    scalar = tf.assert_scalar(3.0)
    assert scalar.shape.ndims == 0 and _run(scalar) == 3.0
