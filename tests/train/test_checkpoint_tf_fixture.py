"""An object-based checkpoint written by TensorFlow 2.21 (tf.compat.v1, graph mode) restores
into the same program built with tensorflux under other variable names: variables, a resource
variable, Adam's slots and beta powers, a Keras Sequential (Dense, BatchNormalization, Dense)
and the save counter. The fixture's generator set each variable to `value_for(key)`."""

import os
import zlib

import numpy as np

import tensorflux as tf

FIXTURE = os.path.join(os.path.dirname(__file__), "data", "tf_object_checkpoint", "ckpt-1")
V = ".ATTRIBUTES/VARIABLE_VALUE"


def value_for(key, shape, dtype):
    """The generator's formula: an arange offset by the key's CRC-32 (int64: 5)."""
    if dtype == np.int64:
        return np.full(shape, 5, np.int64)
    offset = zlib.crc32(key.encode()) % 1000 / 100.0
    return (np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * 0.25
            + offset).astype(dtype)


def test_tensorflow_written_object_checkpoint_restores_by_path():
    with tf.Graph().as_default():
        w = tf.get_variable("renamed_w", shape=[3])
        r = tf.get_variable("renamed_r", shape=[2, 3], use_resource=True)
        model = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(3,)),
                                     tf.keras.layers.BatchNormalization(),
                                     tf.keras.layers.Dense(2)])
        opt = tf.train.AdamOptimizer(0.1)
        opt.minimize(tf.reduce_sum(w * w) + tf.reduce_sum(r), var_list=[w, r])
        ckpt = tf.train.Checkpoint(v=w, r=r, optimizer=opt, model=model)
        status = ckpt.restore(FIXTURE)
        status.assert_consumed()
        dense0, bn, dense2 = model.layers
        slot = ".OPTIMIZER_SLOT/optimizer"
        expected = [
            (w, f"v/{V}"), (r, f"r/{V}"),
            (opt.get_slot(w, "m"), f"v/{slot}/m/{V}"), (opt.get_slot(w, "v"), f"v/{slot}/v/{V}"),
            (opt.get_slot(r, "m"), f"r/{slot}/m/{V}"), (opt.get_slot(r, "v"), f"r/{slot}/v/{V}"),
            (opt._get_beta_accumulators()[0], f"optimizer/beta1_power/{V}"),
            (opt._get_beta_accumulators()[1], f"optimizer/beta2_power/{V}"),
            (dense0.kernel, f"model/layer_with_weights-0/kernel/{V}"),
            (dense0.bias, f"model/layer_with_weights-0/bias/{V}"),
            (bn.gamma, f"model/layer_with_weights-1/gamma/{V}"),
            (bn.beta, f"model/layer_with_weights-1/beta/{V}"),
            (bn.moving_mean, f"model/layer_with_weights-1/moving_mean/{V}"),
            (bn.moving_variance, f"model/layer_with_weights-1/moving_variance/{V}"),
            (dense2.kernel, f"model/layer_with_weights-2/kernel/{V}"),
            (dense2.bias, f"model/layer_with_weights-2/bias/{V}"),
            (ckpt.save_counter, f"save_counter/{V}"),
        ]
        with tf.Session() as sess:
            status.run_restore_ops(sess)
            for var, key in expected:
                want = value_for(key, var.get_shape().as_list(),
                                 var.dtype.base_dtype.as_numpy_dtype)
                np.testing.assert_array_equal(sess.run(var), want, err_msg=key)
    assert {key for _, key in expected} | {"_CHECKPOINTABLE_OBJECT_GRAPH"} == \
        {key for key, _ in tf.train.list_variables(FIXTURE)}
