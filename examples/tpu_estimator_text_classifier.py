"""A text classifier in the shape of BERT's run_classifier.py, on the CPU: features written
to TFRecords and read back with `tf.contrib.data.map_and_batch`, one self-attention layer
with `tf.contrib.layers.layer_norm`, an Adam-with-weight-decay `tf.train.Optimizer`
subclass, and `tf.contrib.tpu.TPUEstimator(use_tpu=False)` for train / evaluate / predict,
then a second estimator warm-started with `tf.train.init_from_checkpoint`.

    python examples/tpu_estimator_text_classifier.py --train_steps 150
"""

import argparse
import collections
import os
import re
import tempfile

import numpy as np

import tensorflux as tf

SEQ, VOCAB, HID = 12, 50, 16


def create_model(input_ids, input_mask, labels, is_training):
    emb = tf.get_variable(
        "bert/embeddings/word_embeddings",
        [VOCAB, HID],
        initializer=tf.truncated_normal_initializer(stddev=0.02),
    )
    x = tf.gather(emb, input_ids)
    x = tf.contrib.layers.layer_norm(
        x, begin_norm_axis=-1, begin_params_axis=-1, scope="bert/embeddings/LayerNorm"
    )
    with tf.variable_scope("bert/encoder/layer_0/attention/self"):
        q = tf.layers.dense(x, HID, name="query")
        k = tf.layers.dense(x, HID, name="key")
        v = tf.layers.dense(x, HID, name="value")
    scores = tf.matmul(q, k, transpose_b=True) / np.sqrt(HID)
    adder = (1.0 - tf.cast(tf.expand_dims(input_mask, 1), tf.float32)) * -10000.0
    probs = tf.nn.softmax(scores + adder)
    if is_training:
        probs = tf.nn.dropout(probs, keep_prob=0.9)
    ctx = tf.matmul(probs, v)
    pooled = tf.layers.dense(
        tf.squeeze(ctx[:, 0:1, :], axis=1), HID, activation=tf.tanh, name="bert/pooler/dense"
    )
    w = tf.get_variable(
        "output_weights", [2, HID], initializer=tf.truncated_normal_initializer(stddev=0.02)
    )
    b = tf.get_variable("output_bias", [2], initializer=tf.zeros_initializer())
    logits = tf.nn.bias_add(tf.matmul(pooled, w, transpose_b=True), b)
    log_probs = tf.nn.log_softmax(logits, axis=-1)
    one_hot = tf.one_hot(labels, depth=2, dtype=tf.float32)
    per_example = -tf.reduce_sum(one_hot * log_probs, axis=-1)
    return tf.reduce_mean(per_example), per_example, logits, tf.nn.softmax(logits, axis=-1)


class AdamWeightDecay(tf.train.Optimizer):
    def __init__(self, learning_rate, weight_decay_rate=0.01, name="AdamWeightDecay"):
        super().__init__(False, name)
        self.learning_rate = learning_rate
        self.weight_decay_rate = weight_decay_rate

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        assignments = []
        for grad, param in grads_and_vars:
            if grad is None:
                continue
            pname = re.match("^(.*):\\d+$", param.name).group(1)
            m = tf.get_variable(
                pname + "/adam_m",
                param.shape.as_list(),
                tf.float32,
                trainable=False,
                initializer=tf.zeros_initializer(),
            )
            v = tf.get_variable(
                pname + "/adam_v",
                param.shape.as_list(),
                tf.float32,
                trainable=False,
                initializer=tf.zeros_initializer(),
            )
            next_m = tf.multiply(0.9, m) + tf.multiply(0.1, grad)
            next_v = tf.multiply(0.999, v) + tf.multiply(0.001, tf.square(grad))
            update = next_m / (tf.sqrt(next_v) + 1e-6)
            if "LayerNorm" not in pname and "bias" not in pname:
                update += self.weight_decay_rate * param
            assignments.extend(
                [
                    param.assign(param - self.learning_rate * update),
                    m.assign(next_m),
                    v.assign(next_v),
                ]
            )
        return tf.group(*assignments, name=name)


def model_fn_builder(init_checkpoint, num_train_steps):
    def model_fn(features, labels, mode, params):
        is_training = mode == tf.estimator.ModeKeys.TRAIN
        total_loss, per_example, logits, probs = create_model(
            features["input_ids"], features["input_mask"], features["label_ids"], is_training
        )
        tvars = tf.trainable_variables()
        scaffold_fn = None
        if init_checkpoint:
            names = {re.match("^(.*):\\d+$", v.name).group(1) for v in tvars}
            stored = [n for n, _ in tf.train.list_variables(init_checkpoint)]
            assignment = {n: n for n in stored if n in names}
            tf.train.init_from_checkpoint(init_checkpoint, assignment)
        if mode == tf.estimator.ModeKeys.TRAIN:
            gs = tf.train.get_or_create_global_step()
            lr = tf.train.polynomial_decay(
                tf.constant(1e-2), gs, num_train_steps, end_learning_rate=0.0
            )
            opt = AdamWeightDecay(lr)
            opt = tf.contrib.tpu.CrossShardOptimizer(opt)  # one shard on the CPU
            grads = tf.gradients(total_loss, tvars)
            grads, _ = tf.clip_by_global_norm(grads, clip_norm=1.0)
            train_op = opt.apply_gradients(zip(grads, tvars), global_step=gs)
            train_op = tf.group(train_op, [gs.assign(gs + 1)])
            return tf.contrib.tpu.TPUEstimatorSpec(
                mode=mode, loss=total_loss, train_op=train_op, scaffold_fn=scaffold_fn
            )
        if mode == tf.estimator.ModeKeys.EVAL:

            def metric_fn(per_example_loss, label_ids, logits):
                predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
                return {
                    "eval_accuracy": tf.metrics.accuracy(labels=label_ids, predictions=predictions),
                    "eval_loss": tf.metrics.mean(values=per_example_loss),
                }

            return tf.contrib.tpu.TPUEstimatorSpec(
                mode=mode,
                loss=total_loss,
                eval_metrics=(metric_fn, [per_example, features["label_ids"], logits]),
                scaffold_fn=scaffold_fn,
            )
        return tf.contrib.tpu.TPUEstimatorSpec(
            mode=mode, predictions={"probabilities": probs}, scaffold_fn=scaffold_fn
        )

    return model_fn


def write_records(path, n, seed):
    rng = np.random.RandomState(seed)
    writer = tf.python_io.TFRecordWriter(path)
    for _ in range(n):
        ids = rng.randint(1, VOCAB, SEQ)
        length = rng.randint(4, SEQ + 1)
        ids[length:] = 0
        label = int(ids[0] > VOCAB // 2)  # the first token decides
        feats = collections.OrderedDict(
            input_ids=tf.train.Feature(int64_list=tf.train.Int64List(value=list(ids))),
            input_mask=tf.train.Feature(
                int64_list=tf.train.Int64List(value=[1] * length + [0] * (SEQ - length))
            ),
            label_ids=tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
        )
        writer.write(
            tf.train.Example(features=tf.train.Features(feature=feats)).SerializeToString()
        )
    writer.close()


def input_fn_builder(path, is_training, drop_remainder):
    name_to_features = {
        "input_ids": tf.FixedLenFeature([SEQ], tf.int64),
        "input_mask": tf.FixedLenFeature([SEQ], tf.int64),
        "label_ids": tf.FixedLenFeature([], tf.int64),
    }

    def decode(record):
        example = tf.parse_single_example(record, name_to_features)
        for name in list(example.keys()):
            t = example[name]
            if t.dtype == tf.int64:
                t = tf.to_int32(t)
            example[name] = t
        return example

    def input_fn(params):
        d = tf.data.TFRecordDataset(path)
        if is_training:
            d = d.repeat().shuffle(buffer_size=100, seed=1)
        return d.apply(
            tf.contrib.data.map_and_batch(
                lambda r: decode(r), batch_size=params["batch_size"], drop_remainder=drop_remainder
            )
        )

    return input_fn


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train_steps", type=int, default=150)
    parser.add_argument("--train_batch_size", type=int, default=8)
    parser.add_argument("--output_dir", default=None)
    args = parser.parse_args(argv)
    tf.logging.set_verbosity(tf.logging.WARN)
    out = args.output_dir or tempfile.mkdtemp()
    train_file = os.path.join(out, "train.tf_record")
    eval_file = os.path.join(out, "eval.tf_record")
    write_records(train_file, 96, 0)
    write_records(eval_file, 32, 1)
    tpu_config = tf.contrib.tpu.TPUConfig(
        iterations_per_loop=10,
        num_shards=8,
        per_host_input_for_training=tf.contrib.tpu.InputPipelineConfig.PER_HOST_V2,
    )
    run_config = tf.contrib.tpu.RunConfig(
        model_dir=os.path.join(out, "model"),
        save_checkpoints_steps=50,
        tf_random_seed=1,
        tpu_config=tpu_config,
    )
    est = tf.contrib.tpu.TPUEstimator(
        use_tpu=False,
        model_fn=model_fn_builder(None, args.train_steps),
        config=run_config,
        train_batch_size=args.train_batch_size,
        eval_batch_size=8,
        predict_batch_size=8,
    )
    est.train(input_fn=input_fn_builder(train_file, True, True), max_steps=args.train_steps)
    result = est.evaluate(input_fn=input_fn_builder(eval_file, False, False), steps=None)
    print("eval:", {k: round(float(v), 4) for k, v in result.items()})
    # A second estimator starting from the first one's checkpoint predicts the same.
    warm = tf.contrib.tpu.TPUEstimator(
        use_tpu=False,
        model_fn=model_fn_builder(est.latest_checkpoint(), 1),
        config=run_config.replace(model_dir=os.path.join(out, "warm")),
        train_batch_size=8,
        eval_batch_size=8,
        predict_batch_size=8,
    )
    predict_input = input_fn_builder(eval_file, False, False)
    warm_probs = np.array([p["probabilities"] for p in warm.predict(input_fn=predict_input)])
    probs = np.array([p["probabilities"] for p in est.predict(input_fn=predict_input)])
    print("warm-started predictions equal:", bool(np.allclose(warm_probs, probs, atol=1e-5)))
    return {"eval": result, "probs": probs, "warm_probs": warm_probs}


if __name__ == "__main__":
    main()
