"""tensorflow.python.ops.resources: initialize_resources groups the resources' initializers
(a no-op for none, TypeError for an object without one); the resource collections."""

import numpy as np
import pytest
from tensorflux.python.ops import resources

import tensorflux as tf


def test_initialize_resources_runs_each_initializer():
    with tf.Graph().as_default():
        a = tf.Variable([1.5, -2.0], use_resource=True)
        b = tf.Variable(7, name="counter")
        init = resources.initialize_resources([a, b], name="setup")
        assert init.name == "setup" and init.type == "NoOp"
        assert {op.name for op in init.control_inputs} == {a.initializer.name, b.initializer.name}
        assert resources.initialize_resources([]).type == "NoOp"
        with tf.Session() as sess:
            sess.run(init)
            np.testing.assert_allclose(sess.run(a), [1.5, -2.0])
            assert sess.run(b) == 7
        with pytest.raises(TypeError, match="has neither a 'create' nor an 'initializer' op"):
            resources.initialize_resources([tf.constant(1.0)])


def test_resource_collections():
    with tf.Graph().as_default() as g:
        marker = object()
        g.add_to_collection(tf.GraphKeys.LOCAL_RESOURCES, marker)
        assert resources.local_resources() == [marker]
        assert resources.shared_resources() == []
