"""EstimatorSpec validation, RunConfig (TF_CONFIG parsing, checkpoint options, replace) and
the cluster resolvers, with TF 1.15's errors."""

import json

import pytest

import tensorflux as tf

ModeKeys = tf.estimator.ModeKeys


def test_mode_keys_values():
    assert (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT) == ("train", "eval", "infer")


def test_estimator_spec_requirements_per_mode():
    with tf.Graph().as_default():
        loss = tf.constant(1.0)
        pred = tf.constant([[1.0]])
        train_op = tf.no_op()
        with pytest.raises(ValueError, match="Missing loss"):
            tf.estimator.EstimatorSpec(ModeKeys.TRAIN, train_op=train_op)
        with pytest.raises(ValueError, match="Missing train_op"):
            tf.estimator.EstimatorSpec(ModeKeys.TRAIN, loss=loss)
        with pytest.raises(ValueError, match="Missing loss"):
            tf.estimator.EstimatorSpec(ModeKeys.EVAL, predictions=pred)
        with pytest.raises(ValueError, match="Missing predictions"):
            tf.estimator.EstimatorSpec(ModeKeys.PREDICT)
        with pytest.raises(ValueError, match="unrecognized"):
            tf.estimator.EstimatorSpec("training", loss=loss, train_op=train_op)
        with pytest.raises(ValueError, match="scalar"):
            tf.estimator.EstimatorSpec(ModeKeys.EVAL, loss=tf.constant([1.0, 2.0]))
        with pytest.raises(TypeError, match="loss must be Tensor"):
            tf.estimator.EstimatorSpec(ModeKeys.EVAL, loss=1.0)
        with pytest.raises(TypeError, match="metric_value, update_op"):
            tf.estimator.EstimatorSpec(ModeKeys.EVAL, loss=loss, eval_metric_ops={"m": loss})
        with pytest.raises(TypeError, match="SessionRunHook"):
            tf.estimator.EstimatorSpec(ModeKeys.TRAIN, loss=loss, train_op=train_op,
                                       training_hooks=[object()])
        with pytest.raises(TypeError, match="Scaffold"):
            tf.estimator.EstimatorSpec(ModeKeys.TRAIN, loss=loss, train_op=train_op,
                                       scaffold=object())
        with pytest.raises(TypeError, match="ExportOutput"):
            tf.estimator.EstimatorSpec(ModeKeys.PREDICT, predictions=pred,
                                       export_outputs={"a": pred})
        # A loss of shape [1] is accepted and reshaped to a scalar; PREDICT gets a default
        # PredictOutput under "serving_default".
        spec = tf.estimator.EstimatorSpec(ModeKeys.EVAL, loss=tf.constant([2.0]))
        assert spec.loss.shape.ndims == 0 and spec.eval_metric_ops == {}
        spec = tf.estimator.EstimatorSpec(ModeKeys.PREDICT, predictions={"p": pred})
        output = spec.export_outputs["serving_default"]
        assert isinstance(output, tf.estimator.export.PredictOutput)
        assert output.outputs == {"p": pred}
    with tf.Graph().as_default():
        other = tf.constant(1.0)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="default graph"):
            tf.estimator.EstimatorSpec(ModeKeys.EVAL, loss=other)


def test_export_outputs_check_dtypes():
    with tf.Graph().as_default():
        scores = tf.constant([[0.5, 0.5]])
        with pytest.raises(ValueError, match="float32"):
            tf.estimator.export.ClassificationOutput(scores=tf.constant([[1]]))
        with pytest.raises(ValueError, match="string"):
            tf.estimator.export.ClassificationOutput(classes=scores)
        with pytest.raises(ValueError, match="At least one"):
            tf.estimator.export.ClassificationOutput()
        with pytest.raises(ValueError, match="float32"):
            tf.estimator.export.RegressionOutput(tf.constant([1]))
        with pytest.raises(ValueError, match="Tensor"):
            tf.estimator.export.PredictOutput({"a": 1})
        raw = {"x": tf.placeholder(tf.float32, [None, 2])}
        with pytest.raises(ValueError, match="single string Tensor"):
            tf.estimator.export.ClassificationOutput(scores=scores).as_signature_def(raw)
        examples = tf.placeholder(tf.string, [None])
        sig = tf.estimator.export.ClassificationOutput(scores=scores).as_signature_def(
            {"examples": examples})
        assert sig.method_name == "tensorflow/serving/classify"
        with pytest.raises(ValueError, match="features must be defined"):
            tf.estimator.export.ServingInputReceiver(None, examples)
        receiver = tf.estimator.export.ServingInputReceiver(scores, examples)
        assert list(receiver.features) == ["feature"]
        assert list(receiver.receiver_tensors) == ["input"]


@pytest.fixture
def tf_config(monkeypatch):
    def set_config(value):
        monkeypatch.setenv("TF_CONFIG", json.dumps(value) if isinstance(value, dict) else
                           value)
    monkeypatch.delenv("TF_CONFIG", raising=False)
    return set_config


CLUSTER = {"chief": ["h0:1"], "worker": ["h1:1", "h2:1"], "ps": ["h3:1", "h4:1"]}


def test_run_config_defaults_without_tf_config(tf_config):
    config = tf.estimator.RunConfig()
    assert (config.task_type, config.task_id, config.master, config.is_chief) == \
        ("worker", 0, "", True)
    assert (config.num_ps_replicas, config.num_worker_replicas) == (0, 1)
    assert config.cluster_spec.as_dict() == {} and config.global_id_in_cluster == 0
    assert (config.save_checkpoints_secs, config.save_checkpoints_steps) == (600, None)
    assert (config.save_summary_steps, config.keep_checkpoint_max,
            config.log_step_count_steps, config.keep_checkpoint_every_n_hours) == \
        (100, 5, 100, 10000)
    assert tf.estimator.RunConfig(save_checkpoints_steps=7).save_checkpoints_secs is None
    with pytest.raises(ValueError, match="cannot be both set"):
        tf.estimator.RunConfig(save_checkpoints_steps=7, save_checkpoints_secs=8)
    with pytest.raises(ValueError, match="train_distribute"):
        tf.estimator.RunConfig(train_distribute=object())


@pytest.mark.parametrize("task,expected", [
    ({"type": "chief", "index": 0}, ("grpc://h0:1", True, 0)),
    ({"type": "worker", "index": 1}, ("grpc://h2:1", False, 2)),
    ({"type": "ps", "index": 1}, ("grpc://h4:1", False, 4)),
    ({"type": "evaluator", "index": 0}, ("", False, None)),
])
def test_run_config_reads_each_task(tf_config, task, expected):
    tf_config({"cluster": CLUSTER, "task": task})
    config = tf.estimator.RunConfig()
    assert (config.master, config.is_chief, config.global_id_in_cluster) == expected
    assert (config.task_type, config.task_id) == (task["type"], task["index"])
    if task["type"] == "evaluator":
        assert (config.num_ps_replicas, config.num_worker_replicas) == (0, 0)
    else:
        assert (config.num_ps_replicas, config.num_worker_replicas) == (2, 3)
    assert config.cluster_spec.as_dict() == CLUSTER
    assert config.evaluation_master == ""


def test_run_config_legacy_master_and_evaluator_in_cluster(tf_config):
    tf_config({"cluster": {"master": ["m:1"], "ps": ["p:1"], "evaluator": ["e:1"]},
               "task": {"type": "master", "index": 0}})
    config = tf.estimator.RunConfig()
    assert config.is_chief and config.master == "grpc://m:1"
    assert config.cluster_spec.jobs == ["master", "ps"]


@pytest.mark.parametrize("value,message", [
    ({"cluster": CLUSTER}, 'must have one "task"'),
    ({"cluster": CLUSTER, "task": {"type": "worker"}}, "index"),
    ({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0}},
     'one "chief" node'),
    ({"cluster": {"chief": ["a:1", "b:1"]}, "task": {"type": "chief", "index": 0}},
     'only one "chief"'),
    ({"cluster": CLUSTER, "task": {"type": "gpu", "index": 0}}, "not a valid task_type"),
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": 5}}, "not a valid task_id"),
    ({"cluster": CLUSTER, "task": {"type": "evaluator", "index": 1}}, "evaluator"),
    ("{not json", "not valid JSON"),
])
def test_run_config_rejects_malformed_tf_config(tf_config, value, message):
    tf_config(value)
    with pytest.raises(ValueError, match=message):
        tf.estimator.RunConfig()


def test_run_config_model_dir_from_tf_config_and_replace(tf_config, tmp_path):
    tf_config({"model_dir": str(tmp_path)})
    assert tf.estimator.RunConfig().model_dir == str(tmp_path)
    with pytest.raises(ValueError, match="same value as the model_dir in TF_CONFIG"):
        tf.estimator.RunConfig(model_dir=str(tmp_path / "other"))
    config = tf.estimator.RunConfig(save_checkpoints_secs=30)
    new = config.replace(save_checkpoints_steps=5, tf_random_seed=3)
    assert (new.save_checkpoints_steps, new.save_checkpoints_secs, new.tf_random_seed) == \
        (5, None, 3)
    assert config.save_checkpoints_secs == 30 and config.tf_random_seed is None
    with pytest.raises(ValueError, match="allowed properties"):
        config.replace(task_type="ps")


def test_tf_config_cluster_resolver(tf_config):
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    assert resolver.cluster_spec().as_dict() == {} and resolver.master() == ""
    tf_config({"cluster": CLUSTER, "task": {"type": "worker", "index": 1},
               "rpc_layer": "grpc", "environment": "cloud"})
    assert resolver.cluster_spec().as_dict() == CLUSTER
    assert (resolver.task_type, resolver.task_id) == ("worker", 1)
    assert resolver.master() == "grpc://h2:1"
    assert resolver.master("ps", 0, rpc_layer="") == "grpc://h3:1"
    assert resolver.environment == "cloud" and resolver.num_accelerators() == {}
    fixed = tf.distribute.cluster_resolver.TFConfigClusterResolver(task_type="chief",
                                                                    task_id=0)
    assert fixed.master() == "grpc://h0:1"
    with pytest.raises(ValueError, match="not a job"):
        resolver.master("evaluator", 0)


def test_simple_and_union_resolvers():
    cr = tf.distribute.cluster_resolver
    simple = cr.SimpleClusterResolver(tf.train.ClusterSpec({"worker": ["a:1"]}),
                                      master="a:1", task_type="worker", task_id=0,
                                      rpc_layer="grpc")
    assert simple.master() == "grpc://a:1" and simple.cluster_spec().num_tasks("worker") == 1
    other = cr.SimpleClusterResolver({"ps": ["p:1"]})
    union = cr.UnionResolver(simple, other)
    assert union.cluster_spec().as_dict() == {"worker": ["a:1"], "ps": ["p:1"]}
    assert union.master() == "grpc://a:1"
    with pytest.raises(TypeError, match="ClusterSpec"):
        cr.SimpleClusterResolver(["a:1"])
    with pytest.raises(ValueError, match="different addresses"):
        cr.UnionResolver(simple, cr.SimpleClusterResolver({"worker": ["b:1"]})).cluster_spec()
