"""A type attr taken from an input's dtype that the op does not allow: TypeError naming the
input ("Value passed to parameter 'x' has DataType ..."), as TF's op construction does; an
attr given explicitly keeps the attr wording."""

import pytest

import tensorflux as tf
from tensorflux.framework.op_def import get_op_def


def test_input_dtype_not_allowed_names_the_parameter():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="Softplus op: Value passed to parameter 'features' "
                                            "has DataType int32 not in list of allowed values: "
                                            "float16, bfloat16, float32, float64"):
            tf.nn.softplus(tf.constant([1, 2]))
        with pytest.raises(TypeError, match="parameter 'x' has DataType complex64"):
            tf.floor(tf.constant([1 + 2j], tf.complex64))
        assert tf.nn.softplus(tf.constant([1.0])).dtype == tf.float32


def test_explicit_attr_keeps_attr_wording():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="Value for attr 'T' of int32 is not in the list"):
            get_op_def("Floor")(tf.constant([1.0]), T=tf.int32)


def test_none_value_is_a_value_error_as_in_tf_1_x():
    """TF's make_tensor_proto refuses None with ValueError("None values not supported."); a
    model_fn computing its loss from labels=None in PREDICT mode hits it."""
    with tf.Graph().as_default():
        for build in (lambda: tf.convert_to_tensor(None), lambda: tf.constant(None),
                      lambda: tf.make_tensor_proto(None),
                      lambda: tf.losses.sparse_softmax_cross_entropy(None, tf.zeros([2, 3]))):
            with pytest.raises(ValueError, match="None values not supported"):
                build()


def test_none_inside_a_list_is_a_type_error_naming_the_list():
    """`tf.reshape(x, [None, 41, 40, 1])` (a 2018 program's cnn_graph): TypeError as in TF,
    naming the list instead of asking for a string."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 1640])
        with pytest.raises(TypeError, match=r"elements of \[None, 41, 40, 1\]"):
            tf.reshape(x, [None, 41, 40, 1])
        with pytest.raises(TypeError, match=r"elements of \[1, None\]"):
            tf.constant([1, None])
        assert tf.reshape(x, [-1, 41, 40, 1]).shape.as_list() == [None, 41, 40, 1]
