"""TPUEstimator on the CPU (use_tpu=False), as BERT's run_classifier.py drives it: per-mode
params['batch_size'], TPUEstimatorSpec with scaffold_fn / eval_metrics / host_call, and the
TPU config and resolver objects."""

import numpy as np
import pytest

import tensorflux as tf

TPU = tf.contrib.tpu
X = np.random.RandomState(0).randn(40, 3).astype(np.float32)
W = np.array([[1.0], [-2.0], [0.5]], np.float32)
Y = X @ W


def _input_fn_builder(seen, is_training=False):
    def input_fn(params):
        seen.append(params["batch_size"])
        ds = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
        if is_training:
            ds = ds.repeat()
        return ds.batch(params["batch_size"], drop_remainder=True)
    return input_fn


def _model_fn_builder(init_checkpoint, seen_params, host_values):
    def model_fn(features, labels, mode, params):
        seen_params.append((mode, params["batch_size"], params["use_tpu"]))
        w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
        pred = tf.matmul(features["x"], w)
        scaffold_fn = None
        if init_checkpoint:
            tf.train.init_from_checkpoint(init_checkpoint, {"w": "w"})

            def scaffold_fn():
                return tf.train.Scaffold()
        if mode == tf.estimator.ModeKeys.PREDICT:
            return TPU.TPUEstimatorSpec(mode, predictions={"pred": pred},
                                        scaffold_fn=scaffold_fn)
        loss = tf.reduce_mean(tf.square(pred - labels))
        if mode == tf.estimator.ModeKeys.TRAIN:
            optimizer = TPU.CrossShardOptimizer(tf.train.GradientDescentOptimizer(0.1))
            train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())

            def host_fn(step, value):
                host_values.append(1)
                return tf.identity(value)
            return TPU.TPUEstimatorSpec(mode, loss=loss, train_op=train_op,
                                        scaffold_fn=scaffold_fn,
                                        host_call=(host_fn, [tf.train.get_global_step(),
                                                             loss]))

        def metric_fn(labels, pred):
            return {"mae": tf.metrics.mean_absolute_error(labels, pred)}
        return TPU.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, pred]),
                                    scaffold_fn=scaffold_fn)
    return model_fn


def _config(model_dir):
    return TPU.RunConfig(model_dir=model_dir, save_checkpoints_steps=100,
                         tpu_config=TPU.TPUConfig(iterations_per_loop=10, num_shards=8,
                                                  per_host_input_for_training=TPU.
                                                  InputPipelineConfig.PER_HOST_V2))


def test_train_eval_predict_on_cpu(tmp_path):
    seen_input, seen_params, host_values = [], [], []
    estimator = TPU.TPUEstimator(
        use_tpu=False, model_fn=_model_fn_builder(None, seen_params, host_values),
        config=_config(str(tmp_path)), train_batch_size=8, eval_batch_size=4,
        predict_batch_size=5)
    estimator.train(_input_fn_builder(seen_input, is_training=True), max_steps=30)
    result = estimator.evaluate(_input_fn_builder(seen_input), steps=10)
    w = estimator.get_variable_value("w")
    assert result["global_step"] == 30
    np.testing.assert_allclose(result["mae"], np.abs(X @ w - Y).mean(), rtol=1e-4)
    preds = list(estimator.predict(_input_fn_builder(seen_input)))
    assert len(preds) == 40
    np.testing.assert_allclose(preds[3]["pred"], (X @ w)[3], rtol=1e-5)
    assert seen_input == [8, 4, 5]
    assert [p[1:] for p in seen_params] == [(8, False), (4, False), (5, False)]
    assert len(host_values) == 1       # host_fn builds its ops once
    assert estimator.config.tpu_config.iterations_per_loop == 10


def test_scaffold_fn_and_init_from_checkpoint(tmp_path):
    with tf.Graph().as_default():
        tf.get_variable("w", initializer=W)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "init" / "model.ckpt"))
    estimator = TPU.TPUEstimator(
        use_tpu=False, model_fn=_model_fn_builder(path, [], []),
        config=_config(str(tmp_path / "run")), train_batch_size=8, eval_batch_size=8,
        predict_batch_size=8)
    estimator.train(_input_fn_builder([]), max_steps=1)
    # started from the checkpoint's exact weights: one step on a zero-loss model keeps them
    np.testing.assert_allclose(estimator.get_variable_value("w"), W, atol=1e-6)


def test_arguments_are_checked():
    config = TPU.RunConfig()
    with pytest.raises(ValueError, match="tpu_config.RunConfig"):
        TPU.TPUEstimator(model_fn=lambda features, labels, mode: None, use_tpu=False,
                         config=tf.estimator.RunConfig())
    with pytest.raises(ValueError, match="reserved keys"):
        TPU.TPUEstimator(model_fn=lambda features, labels, mode, params: None, use_tpu=False,
                         config=config, params={"batch_size": 3})
    with pytest.raises(ValueError, match="no.*TPU|has none"):
        TPU.TPUEstimator(model_fn=lambda features, labels, mode: None, config=config)
    with pytest.raises(ValueError, match="positive integer"):
        TPU.TPUEstimator(model_fn=lambda features, labels, mode: None, use_tpu=False,
                         config=config, train_batch_size=0)
    with pytest.raises(ValueError, match="tuple of length 2"):
        TPU.TPUEstimatorSpec(tf.estimator.ModeKeys.EVAL, eval_metrics=(lambda: None,))
    with pytest.raises(ValueError, match="iterations_per_loop"):
        TPU.TPUConfig(iterations_per_loop=0)


def test_resolver_tpu_namespace_and_bfloat16_scope():
    resolver = tf.contrib.cluster_resolver.TPUClusterResolver(tpu="grpc://10.1.2.3:8470")
    assert resolver.master() == "grpc://10.1.2.3:8470"
    assert resolver.cluster_spec().as_dict() == {"worker": ["10.1.2.3:8470"]}
    with pytest.raises(ValueError, match="TPU Name"):
        tf.distribute.cluster_resolver.TPUClusterResolver()
    with pytest.raises(ValueError, match="Google Cloud"):
        tf.distribute.cluster_resolver.TPUClusterResolver(tpu="my-tpu")
    with pytest.raises(NotImplementedError, match="no TPUs"):
        tf.tpu.rewrite(lambda: None)
    assert tf.tpu.CrossShardOptimizer is TPU.CrossShardOptimizer
    assert tf.estimator.tpu.TPUEstimator is TPU.TPUEstimator
    with tf.Graph().as_default():
        with tf.tpu.bfloat16_scope():
            v = tf.get_variable("v", [2], dtype=tf.bfloat16,
                                initializer=tf.constant_initializer(1.5))
        assert v.dtype == tf.bfloat16
        assert tf.global_variables()[0].dtype.base_dtype == tf.float32
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(tf.cast(v, tf.float32)), [1.5, 1.5])
