"""`Variable._shared_name`: the variable's name without its output index (TF's private)."""

import tensorflux as tf


def test_shared_name_of_ref_and_resource_variables():
    with tf.Graph().as_default():
        with tf.variable_scope("outer"):
            ref = tf.Variable([1.0], name="w")
            res = tf.get_variable("r", [2], use_resource=True)
        assert ref.name == "outer/w:0" and ref._shared_name == "outer/w"
        assert res._shared_name == "outer/r"
        opt = tf.train.AdagradOptimizer(0.1)
        opt.apply_gradients([(tf.ones([1]), ref)])
        slot = opt.get_slot(ref, "accumulator")
        assert slot.name.startswith(ref._shared_name)
