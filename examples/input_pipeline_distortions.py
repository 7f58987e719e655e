"""A TF1 queue-based input pipeline with image distortions, trained under
MonitoredTrainingSession.

1. Writes a few TFRecord shards of small synthetic RGB images, PNG-encoded in tf.train.Example
   protos (four classes: horizontal stripes, vertical stripes, a checkerboard, flat color).
2. Reads them back the classic way: string_input_producer -> TFRecordReader ->
   parse_single_example -> decode_png, then distorts each image (random crop, random flip,
   random brightness and contrast, standardization) and batches with shuffle_batch.
3. Trains a small convolutional network under tf.train.MonitoredTrainingSession, which starts
   the queue runners, checkpoints to --train_dir, writes summaries and stops at --steps through
   a StopAtStepHook. Rerunning continues from the checkpoint.

    python examples/input_pipeline_distortions.py --steps 300 --train_dir /tmp/distort_train
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

import tensorflux as tf

SIZE, CROP, CLASSES = 16, 12, 4


def synthetic_image(label: int, rng: np.random.RandomState) -> np.ndarray:
    """A [SIZE, SIZE, 3] uint8 image of class `label` with random colors and phase."""
    color, other = rng.randint(0, 256, 3), rng.randint(0, 256, 3)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] + rng.randint(0, 4, 2)[:, None, None]
    if label == 0:
        mask = (yy // 2) % 2 == 0
    elif label == 1:
        mask = (xx // 2) % 2 == 0
    elif label == 2:
        mask = ((yy // 2) + (xx // 2)) % 2 == 0
    else:
        mask = np.ones((SIZE, SIZE), bool)
    image = np.where(mask[..., None], color, other) + rng.normal(0, 8, (SIZE, SIZE, 3))
    return np.clip(image, 0, 255).astype(np.uint8)


def write_shards(data_dir: str, shards: int, per_shard: int, seed: int = 0) -> list:
    """Writes `shards` TFRecord files of PNG-encoded examples; returns their paths."""
    rng = np.random.RandomState(seed)
    tf.gfile.MakeDirs(data_dir)
    paths = []
    with tf.Graph().as_default():
        pixels = tf.placeholder(tf.uint8, [SIZE, SIZE, 3])
        encoded = tf.image.encode_png(pixels)
        with tf.Session() as sess:
            for shard in range(shards):
                path = os.path.join(data_dir, f"train-{shard:05d}-of-{shards:05d}.tfrecord")
                with tf.python_io.TFRecordWriter(path) as writer:
                    for _ in range(per_shard):
                        label = int(rng.randint(CLASSES))
                        png = sess.run(encoded, {pixels: synthetic_image(label, rng)})
                        example = tf.train.Example(features=tf.train.Features(feature={
                            "image/encoded": tf.train.Feature(
                                bytes_list=tf.train.BytesList(value=[png])),
                            "image/class/label": tf.train.Feature(
                                int64_list=tf.train.Int64List(value=[label])),
                        }))
                        writer.write(example.SerializeToString())
                paths.append(path)
    return paths


def distorted_inputs(filenames: list, batch_size: int, seed: int):
    """Batches of distorted [CROP, CROP, 3] float images and their labels, from a queue."""
    filename_queue = tf.train.string_input_producer(filenames, shuffle=True, seed=seed)
    reader = tf.TFRecordReader()
    _, serialized = reader.read(filename_queue)
    features = tf.parse_single_example(serialized, features={
        "image/encoded": tf.FixedLenFeature([], tf.string),
        "image/class/label": tf.FixedLenFeature([], tf.int64),
    })
    image = tf.image.decode_png(features["image/encoded"], channels=3)
    image.set_shape([SIZE, SIZE, 3])
    image = tf.image.convert_image_dtype(image, tf.float32)
    image = tf.random_crop(image, [CROP, CROP, 3], seed=seed)
    image = tf.image.random_flip_left_right(image, seed=seed)
    image = tf.image.random_brightness(image, max_delta=0.2, seed=seed)
    image = tf.image.random_contrast(image, lower=0.7, upper=1.3, seed=seed)
    image = tf.image.per_image_standardization(image)
    label = tf.cast(features["image/class/label"], tf.int32)
    images, labels = tf.train.shuffle_batch([image, label], batch_size=batch_size,
                                            capacity=20 * batch_size,
                                            min_after_dequeue=5 * batch_size, num_threads=2,
                                            seed=seed)
    tf.summary.image("distorted_images", images, max_outputs=4)
    return images, labels


def inference(images):
    net = tf.layers.conv2d(images, 16, 3, padding="same", activation=tf.nn.relu, name="conv1")
    net = tf.layers.max_pooling2d(net, 2, 2, name="pool1")
    net = tf.layers.conv2d(net, 32, 3, padding="same", activation=tf.nn.relu, name="conv2")
    net = tf.reduce_mean(net, axis=[1, 2], name="global_pool")
    return tf.layers.dense(net, CLASSES, name="logits")


class LossHistoryHook(tf.train.SessionRunHook):
    """Records the loss and batch accuracy of every training step."""

    def __init__(self, loss, accuracy):
        self._fetches = {"loss": loss, "accuracy": accuracy}
        self.losses, self.accuracies = [], []

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._fetches)

    def after_run(self, run_context, run_values):
        self.losses.append(float(run_values.results["loss"]))
        self.accuracies.append(float(run_values.results["accuracy"]))


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400, help="global step to stop at")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=0.01)
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--examples_per_shard", type=int, default=100)
    base = os.path.join(tempfile.gettempdir(), "tensorflux_distortions")
    parser.add_argument("--data_dir", default=os.path.join(base, "data"))
    parser.add_argument("--train_dir", default=os.path.join(base, "train"))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    tf.logging.set_verbosity(tf.logging.INFO)

    filenames = write_shards(args.data_dir, args.shards, args.examples_per_shard)
    with tf.Graph().as_default():
        tf.set_random_seed(args.seed)
        global_step = tf.train.get_or_create_global_step()
        images, labels = distorted_inputs(filenames, args.batch_size, args.seed)
        logits = inference(images)
        loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=tf.int32),
                                                   labels), tf.float32))
        tf.summary.scalar("loss", loss)
        tf.summary.scalar("batch_accuracy", accuracy)
        train_op = tf.train.AdamOptimizer(args.learning_rate).minimize(loss,
                                                                       global_step=global_step)
        history = LossHistoryHook(loss, accuracy)
        hooks = [tf.train.StopAtStepHook(last_step=args.steps), tf.train.NanTensorHook(loss),
                 tf.train.LoggingTensorHook({"step": global_step, "loss": loss},
                                            every_n_iter=100),
                 history]
        with tf.train.MonitoredTrainingSession(checkpoint_dir=args.train_dir, hooks=hooks,
                                               save_summaries_steps=50,
                                               save_checkpoint_secs=None,
                                               save_checkpoint_steps=100,
                                               log_step_count_steps=None) as sess:
            while not sess.should_stop():
                sess.run(train_op)
    checkpoint = tf.train.latest_checkpoint(args.train_dir)
    tf.logging.info("trained %d steps; last checkpoint %s", len(history.losses), checkpoint)
    return {"losses": history.losses, "accuracies": history.accuracies,
            "checkpoint": checkpoint, "train_dir": args.train_dir, "filenames": filenames}


if __name__ == "__main__":
    main()
