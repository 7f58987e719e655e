"""tf.user_ops.my_fact: the Fact example op."""

from op_helpers import graph, run  # noqa: F401 - autouse fixture

import tensorflux as tf

COVERED_OPS = {"Fact"}


def test_my_fact_outputs_a_true_fact():
    fact = tf.user_ops.my_fact()
    assert fact.op.type == "Fact" and fact.dtype == tf.string
    assert fact.get_shape().ndims is None
    text = run(fact).decode()
    left, right = text.split(" == ")
    assert left.endswith("!") and int(right) == 1  # 0! == 1
