"""Training-step throughput: an MLP, a CNN, an LSTM language model, word2vec and the CIFAR-10
tutorial's model, quiet or contended.

The same TF1 graph code runs on tensorflux and, when importable, on TensorFlow's tf.compat.v1
in the same process; PyTorch runs equivalent eager models when importable. Frameworks run
interleaved (each model, each round, every framework in turn); the table gives the median
ms/step over rounds, examples/s, the ratio to TensorFlow and the first step's time (graph
build, plan, compilation) of each model.

`--contend K` runs K CPU-bound processes (busy loops in pure Python, or NumPy products with
`--contend-kind numpy`) for the whole run, in this session or (`--contend-session own`) in a
session of their own as another user's programs would be; they are killed at exit.
`--cluster` times a local cluster instead: `tensorflux cluster` with one PS and two workers,
each worker a client running an mnist_replica-shaped MLP (784-100-10, batch 100, Adam,
variables on the PS) against its own task; TensorFlow's gRPC runtime runs the same cluster
(three processes on loopback) side by side when importable, rounds alternating.

    python bench/training.py [--steps N] [--rounds R] [--models mlp,cnn,lstm,word2vec,cifar10]
                             [--contend K] [--jit default|off|on]
    python bench/training.py --cluster [--steps N] [--rounds R] [--contend K]

`word2vec` is TF1's word2vec_basic step (50000x128 embedding, batch 128, NCE loss with 64
log-uniform negatives, sparse SGD); it is not in the default `--models`.
`--jit` sets tensorflux's `global_jit_level` (elementwise fusion); `first ms` is the first
training step's wall time (plan building plus compiled-kernel loading or compiling).
"""

from __future__ import annotations

import argparse
import atexit
import os
import re
import signal
import statistics
import subprocess
import sys
import time

import numpy as np

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
MARK = "@@"
_HOGS = {
    "python": "while True:\n    pass\n",
    "numpy": ("import numpy as np\na = np.random.rand(256, 256)\n"
              "while True:\n    a @ a\n"),
}


def start_contention(count: int, kind: str = "python", own_session: bool = False) -> list:
    """Starts `count` CPU-bound processes; they are killed when this process exits.

    With `own_session` they run in a session of their own, as another user's programs do:
    Linux's autogroup scheduling then shares the CPU between sessions first, so the hogs
    take less from the benchmark than when they are its children in the same session.
    """
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, "-c", _HOGS[kind]], env=env,
                              start_new_session=own_session)
             for _ in range(count)]

    def stop():
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        for proc in procs:
            proc.wait()

    atexit.register(stop)
    # NOTE: a SIGTERM (`timeout`, a job runner) would skip atexit and leave the hogs running.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    return procs


def _cpu_fields() -> list:
    with open("/proc/stat") as f:
        return [int(v) for v in f.readline().split()[1:]]


def machine_load(seconds: float = 0.5) -> str:
    """The 1-minute load average, and the busy and steal shares over `seconds`, as a string."""
    before = _cpu_fields()
    time.sleep(seconds)
    delta = [b - a for a, b in zip(before, _cpu_fields())]
    total = max(1, sum(delta))
    idle = (delta[3] + delta[4]) / total
    steal = delta[7] / total if len(delta) > 7 else 0.0
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    return f"load {load}, busy {1 - idle:.0%}, steal {steal:.0%}"


def _median_step(run, steps: int, warmup: int = 3) -> tuple[float, float]:
    """(median seconds per step, seconds of the first step)."""
    start = time.perf_counter()
    run()
    first = time.perf_counter() - start
    for _ in range(warmup - 1):
        run()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), first


def mlp_graph(tf, batch=128):
    x = tf.placeholder(tf.float32, [batch, 784])
    y = tf.placeholder(tf.int64, [batch])
    h = tf.layers.dense(x, 1024, activation=tf.nn.relu)
    h = tf.layers.dense(h, 1024, activation=tf.nn.relu)
    logits = tf.layers.dense(h, 10)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    rng = np.random.RandomState(0)
    feed = {x: rng.rand(batch, 784).astype(np.float32), y: rng.randint(0, 10, batch)}
    return train, feed, batch


def cnn_graph(tf, batch=64):
    x = tf.placeholder(tf.float32, [batch, 32, 32, 3])
    y = tf.placeholder(tf.int64, [batch])
    h = tf.layers.conv2d(x, 32, 5, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.conv2d(h, 64, 5, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.flatten(h)
    h = tf.layers.dense(h, 512, activation=tf.nn.relu)
    logits = tf.layers.dense(h, 10)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    rng = np.random.RandomState(0)
    feed = {x: rng.rand(batch, 32, 32, 3).astype(np.float32), y: rng.randint(0, 10, batch)}
    return train, feed, batch


def lstm_graph(tf, batch=32, steps=20, vocab=10000, size=256):
    words = tf.placeholder(tf.int32, [batch, steps])
    targets = tf.placeholder(tf.int32, [batch, steps])
    embedding = tf.get_variable("embedding", [vocab, size])
    inputs = tf.nn.embedding_lookup(embedding, words)
    cell = tf.nn.rnn_cell.BasicLSTMCell(size)
    outputs, _ = tf.nn.static_rnn(cell, tf.unstack(inputs, axis=1), dtype=tf.float32)
    output = tf.reshape(tf.concat(outputs, 1), [-1, size])
    logits = tf.layers.dense(output, vocab)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.reshape(targets, [-1]), logits=logits))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    rng = np.random.RandomState(0)
    feed = {words: rng.randint(0, vocab, (batch, steps)),
            targets: rng.randint(0, vocab, (batch, steps))}
    return train, feed, batch


def word2vec_inputs(rng, batch, vocab):
    """Center and context word ids, Zipf-like as text8's frequency-sorted ids are."""
    ids = np.minimum(rng.zipf(1.3, size=2 * batch) - 1, vocab - 1).astype(np.int32)
    return ids[:batch], ids[batch:].reshape(batch, 1)


def word2vec_graph(tf, batch=128, vocab=50000, size=128, num_sampled=64):
    """TF1's word2vec_basic: skip-gram with NCE loss and sparse SGD updates."""
    train_inputs = tf.placeholder(tf.int32, [batch])
    train_labels = tf.placeholder(tf.int32, [batch, 1])
    embeddings = tf.Variable(tf.random_uniform([vocab, size], -1.0, 1.0))
    embed = tf.nn.embedding_lookup(embeddings, train_inputs)
    nce_weights = tf.Variable(tf.truncated_normal([vocab, size], stddev=1.0 / np.sqrt(size)))
    nce_biases = tf.Variable(tf.zeros([vocab]))
    loss = tf.reduce_mean(tf.nn.nce_loss(weights=nce_weights, biases=nce_biases,
                                         labels=train_labels, inputs=embed,
                                         num_sampled=num_sampled, num_classes=vocab))
    train = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
    centers, contexts = word2vec_inputs(np.random.RandomState(0), batch, vocab)
    return train, {train_inputs: centers, train_labels: contexts}, batch


def cifar10_graph(tf, batch=128):
    """The CIFAR-10 tutorial's model and training op (tensorflow/models tutorials/image/cifar10:
    cifar10.inference, loss and train), fed from placeholders instead of the input queues.

    Returns the train op and the loss (the tutorial's logging hook fetches the loss each step)
    and, as a periodic fetch, the merged summaries, which the tutorial's MonitoredTrainingSession
    writes every 100 steps.
    """
    def variable(name, shape, initializer):
        with tf.device("/cpu:0"):
            return tf.get_variable(name, shape, initializer=initializer, dtype=tf.float32)

    def decayed_variable(name, shape, stddev, wd):
        var = variable(name, shape, tf.truncated_normal_initializer(stddev=stddev))
        if wd is not None:
            tf.add_to_collection("losses", tf.multiply(tf.nn.l2_loss(var), wd,
                                                       name="weight_loss"))
        return var

    def activation_summary(x):
        tf.summary.histogram(x.op.name + "/activations", x)
        tf.summary.scalar(x.op.name + "/sparsity", tf.nn.zero_fraction(x))

    def conv_layer(name, x, shape, bias):
        with tf.variable_scope(name) as scope:
            kernel = decayed_variable("weights", shape, 5e-2, 0.0)
            conv = tf.nn.conv2d(x, kernel, [1, 1, 1, 1], padding="SAME")
            biases = variable("biases", shape[-1:], tf.constant_initializer(bias))
            out = tf.nn.relu(tf.nn.bias_add(conv, biases), name=scope.name)
        activation_summary(out)
        return out

    def local_layer(name, x, shape, wd, relu=True):
        with tf.variable_scope(name) as scope:
            weights = decayed_variable("weights", shape, 0.04 if relu else 1 / 192.0, wd)
            biases = variable("biases", shape[-1:], tf.constant_initializer(0.1 if relu else 0))
            if relu:
                out = tf.nn.relu(tf.matmul(x, weights) + biases, name=scope.name)
            else:
                out = tf.add(tf.matmul(x, weights), biases, name=scope.name)
        activation_summary(out)
        return out

    images = tf.placeholder(tf.float32, [batch, 24, 24, 3])
    labels = tf.placeholder(tf.int32, [batch])
    global_step = tf.train.get_or_create_global_step()
    conv1 = conv_layer("conv1", images, [5, 5, 3, 64], 0.0)
    pool1 = tf.nn.max_pool(conv1, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME",
                           name="pool1")
    norm1 = tf.nn.lrn(pool1, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75, name="norm1")
    conv2 = conv_layer("conv2", norm1, [5, 5, 64, 64], 0.1)
    norm2 = tf.nn.lrn(conv2, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75, name="norm2")
    pool2 = tf.nn.max_pool(norm2, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME",
                           name="pool2")
    reshape = tf.reshape(pool2, [batch, -1])
    local3 = local_layer("local3", reshape, [reshape.get_shape().as_list()[1], 384], 0.004)
    local4 = local_layer("local4", local3, [384, 192], 0.004)
    logits = local_layer("softmax_linear", local4, [192, 10], 0.0, relu=False)

    cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.cast(labels, tf.int64), logits=logits, name="cross_entropy_per_example")
    tf.add_to_collection("losses", tf.reduce_mean(cross_entropy, name="cross_entropy"))
    total_loss = tf.add_n(tf.get_collection("losses"), name="total_loss")

    decay_steps = int(50000 / batch * 350.0)
    lr = tf.train.exponential_decay(0.1, global_step, decay_steps, 0.1, staircase=True)
    tf.summary.scalar("learning_rate", lr)
    loss_averages = tf.train.ExponentialMovingAverage(0.9, name="avg")
    losses = tf.get_collection("losses")
    loss_averages_op = loss_averages.apply(losses + [total_loss])
    for each in losses + [total_loss]:
        tf.summary.scalar(each.op.name + " (raw)", each)
        tf.summary.scalar(each.op.name, loss_averages.average(each))
    with tf.control_dependencies([loss_averages_op]):
        opt = tf.train.GradientDescentOptimizer(lr)
        grads = opt.compute_gradients(total_loss)
    apply_gradient_op = opt.apply_gradients(grads, global_step=global_step)
    for var in tf.trainable_variables():
        tf.summary.histogram(var.op.name, var)
    for grad, var in grads:
        if grad is not None:
            tf.summary.histogram(var.op.name + "/gradients", grad)
    variable_averages = tf.train.ExponentialMovingAverage(0.9999, global_step)
    variables_averages_op = variable_averages.apply(tf.trainable_variables())
    with tf.control_dependencies([apply_gradient_op, variables_averages_op]):
        train_op = tf.no_op(name="train")

    rng = np.random.RandomState(0)
    feed = {images: rng.standard_normal((batch, 24, 24, 3)).astype(np.float32),
            labels: rng.randint(0, 10, batch)}
    return [train_op, total_loss], feed, batch, (tf.summary.merge_all(), 100)


GRAPHS = {"mlp": mlp_graph, "cnn": cnn_graph, "lstm": lstm_graph, "word2vec": word2vec_graph,
          "cifar10": cifar10_graph}


def graph_framework(tf, model: str, steps: int, jit: str = "default"):
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        train, feed, batch, *periodic = GRAPHS[model](tf)
        init = tf.global_variables_initializer()
    config = None
    if jit != "default":
        levels = tf.OptimizerOptions
        config = tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=levels(
            global_jit_level=levels.ON_1 if jit == "on" else levels.OFF)))
    with tf.Session(graph=graph, config=config) as sess:
        sess.run(init)
        if not periodic:
            return (*_median_step(lambda: sess.run(train, feed), steps), batch)
        # A fetch the program runs every `every` steps (summaries), counted from the first.
        extra, every = periodic[0]
        counter = iter(range(1 << 62))

        def step():
            fetches = train if next(counter) % every else [train, extra]
            sess.run(fetches, feed)

        return (*_median_step(step, steps), batch)


def log_uniform_unique(rng, num_sampled: int, vocab: int) -> tuple:
    """(distinct ids, tries) as TF's LogUniformCandidateSampler with unique=True draws them:
    the first `num_sampled` distinct values of an i.i.d. log-uniform stream."""
    log_range = np.log(vocab + 1.0)
    stream = np.empty(0, np.int64)
    while True:
        draws = (np.exp(rng.rand(2 * num_sampled) * log_range) - 1).astype(np.int64) % vocab
        stream = np.concatenate([stream, draws])
        _, first = np.unique(stream, return_index=True)
        if first.size >= num_sampled:
            first = np.sort(first)[:num_sampled]
            return stream[first], int(first[-1]) + 1


def torch_word2vec(torch, steps: int, batch=128, vocab=50000, size=128, num_sampled=64):
    """word2vec_basic in PyTorch: sparse embeddings, TF's NCE loss and sampler, sparse SGD."""
    nn = torch.nn
    rng = np.random.RandomState(0)
    centers, contexts = (torch.tensor(a.astype(np.int64))
                         for a in word2vec_inputs(rng, batch, vocab))
    embeddings = nn.Embedding(vocab, size, sparse=True)
    nn.init.uniform_(embeddings.weight, -1.0, 1.0)
    weights = nn.Embedding(vocab, size, sparse=True)
    std = 1.0 / np.sqrt(size)
    nn.init.trunc_normal_(weights.weight, std=std, a=-2 * std, b=2 * std)
    biases = nn.Embedding(vocab, 1, sparse=True)
    nn.init.zeros_(biases.weight)
    optimizer = torch.optim.SGD([embeddings.weight, weights.weight, biases.weight], lr=1.0)
    log_range = np.log(vocab + 1.0)

    def expected_count(ids, tries):
        p = np.log((ids + 2.0) / (ids + 1.0)) / log_range
        return torch.tensor(-np.expm1(tries * np.log1p(-p)), dtype=torch.float32)

    def step():
        sampled, tries = log_uniform_unique(rng, num_sampled, vocab)
        true_ids = contexts[:, 0]
        embed = embeddings(centers)
        true_logits = ((embed * weights(true_ids)).sum(1) + biases(true_ids)[:, 0]
                       - torch.log(expected_count(true_ids.numpy(), tries)))
        sampled_t = torch.tensor(sampled)
        sampled_logits = (embed @ weights(sampled_t).T + biases(sampled_t)[:, 0]
                          - torch.log(expected_count(sampled, tries)))
        bce = nn.functional.binary_cross_entropy_with_logits
        loss = (bce(true_logits, torch.ones_like(true_logits), reduction="sum")
                + bce(sampled_logits, torch.zeros_like(sampled_logits), reduction="sum")) / batch
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return (*_median_step(step, steps), batch)


def torch_framework(torch, model: str, steps: int):
    nn = torch.nn
    if model == "word2vec":
        return torch_word2vec(torch, steps)
    rng = np.random.RandomState(0)
    if model == "mlp":
        net = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                            nn.Linear(1024, 10))
        x = torch.tensor(rng.rand(128, 784).astype(np.float32))
        y = torch.tensor(rng.randint(0, 10, 128))
        batch = 128
    elif model == "cnn":
        net = nn.Sequential(nn.Conv2d(3, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Flatten(), nn.Linear(64 * 8 * 8, 512), nn.ReLU(),
                            nn.Linear(512, 10))
        x = torch.tensor(rng.rand(64, 3, 32, 32).astype(np.float32))
        y = torch.tensor(rng.randint(0, 10, 64))
        batch = 64
    elif model == "cifar10":
        # The tutorial's model; TF's SAME 3x3/2 pooling pads bottom/right only, padding=1 both
        # sides (same output size). LocalResponseNorm divides alpha by size: 0.001/9 * 9.
        lrn = dict(size=9, alpha=0.001, beta=0.75, k=1.0)
        net = nn.Sequential(nn.Conv2d(3, 64, 5, padding=2), nn.ReLU(),
                            nn.MaxPool2d(3, 2, padding=1), nn.LocalResponseNorm(**lrn),
                            nn.Conv2d(64, 64, 5, padding=2), nn.ReLU(),
                            nn.LocalResponseNorm(**lrn), nn.MaxPool2d(3, 2, padding=1),
                            nn.Flatten(), nn.Linear(6 * 6 * 64, 384), nn.ReLU(),
                            nn.Linear(384, 192), nn.ReLU(), nn.Linear(192, 10))
        x = torch.tensor(rng.standard_normal((128, 3, 24, 24)).astype(np.float32))
        y = torch.tensor(rng.randint(0, 10, 128))
        batch = 128
    else:
        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(10000, 256)
                self.lstm = nn.LSTM(256, 256, batch_first=True)
                self.out = nn.Linear(256, 10000)

            def forward(self, words):
                hidden, _ = self.lstm(self.embed(words))
                return self.out(hidden.reshape(-1, 256))

        net = LM()
        x = torch.tensor(rng.randint(0, 10000, (32, 20)))
        y = torch.tensor(rng.randint(0, 10000, 32 * 20))
        batch = 32
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    decayed = [net[i].weight for i in (9, 11)] if model == "cifar10" else []
    averages = [p.detach().clone() for p in net.parameters()] if model == "cifar10" else []

    def step():
        optimizer.zero_grad()
        loss = loss_fn(net(x), y)
        for weight in decayed:  # the tutorial's weight decay on local3 and local4
            loss = loss + 0.004 * 0.5 * weight.pow(2).sum()
        loss.backward()
        optimizer.step()
        with torch.no_grad():  # the tutorial's moving averages of the variables
            for average, param in zip(averages, net.parameters()):
                average.lerp_(param, 1 - 0.9999)

    return (*_median_step(step, steps), batch)


# -- the local cluster case ----------------------------------------------------------------

def cluster_worker(steps: int, backend: str = "tensorflux") -> None:
    """One worker client of `tensorflux cluster` (reads TFX_CLUSTER), printing its times;
    with backend "tensorflow", a TensorFlow worker task (its own server) of the same
    cluster shape (`run_cluster_tf`)."""
    import json

    cluster = json.loads(os.environ["TFX_CLUSTER"])
    task = int(os.environ["TFX_TASK_INDEX"])
    if backend in ("tensorflow", "tensorflux-server"):
        if backend == "tensorflow":
            tf = _tf_compat_v1()
        else:
            import tensorflux as tf
        server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="worker",
                                 task_index=task)
        target = server.target
    else:
        import tensorflux as tf

        target = f"grpc://{cluster['worker'][task]}"
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(task)
        with tf.device(tf.train.replica_device_setter(
                worker_device=f"/job:worker/task:{task}", cluster=cluster)):
            x = tf.placeholder(tf.float32, [100, 784])
            y = tf.placeholder(tf.int64, [100])
            h = tf.layers.dense(x, 100, activation=tf.nn.relu)
            logits = tf.layers.dense(h, 10)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=y, logits=logits))
            step = tf.train.get_or_create_global_step()
            train = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=step)
        init = tf.global_variables_initializer()
    rng = np.random.RandomState(task)
    feed = {x: rng.rand(100, 784).astype(np.float32), y: rng.randint(0, 10, 100)}
    with tf.Session(target, graph=graph) as sess:
        if task == 0:
            sess.run(init)
        else:
            while True:
                try:
                    sess.run(step)
                    break
                except tf.errors.FailedPreconditionError:
                    time.sleep(0.05)
        seconds, first = _median_step(lambda: sess.run(train, feed), steps)
    # One write of a whole line: the workers share the cluster's stdout pipe.
    sys.stdout.write(f"\n{MARK} {task} {seconds} {first}\n")
    sys.stdout.flush()


def _marks(text: str) -> list:
    """[(task, seconds, first)] printed by `cluster_worker`s (lines may interleave)."""
    return re.findall(rf"{MARK} (\d+) ([0-9.e+-]+) ([0-9.e+-]+)", text)


def run_cluster(steps: int, pythonpath: str, *flags: str) -> tuple[float, float]:
    """Median ms/step over the workers of a 1 PS + 2 workers local cluster, and first step
    (`flags`: more options of `tensorflux cluster`)."""
    env = dict(os.environ, PYTHONPATH=pythonpath)
    command = [sys.executable, "-m", "tensorflux.cli", "cluster", "--ps", "1", "--workers", "2",
               *flags, "--", sys.executable, os.path.abspath(__file__), "--cluster-worker",
               "--steps", str(steps)]
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    marks = _marks(out.stdout)
    if len(marks) != 2:
        raise RuntimeError(f"the cluster run failed:\n{out.stdout[-2000:]}\n"
                           f"{out.stderr[-2000:]}")
    return (statistics.median(float(m[1]) for m in marks),
            statistics.median(float(m[2]) for m in marks))


def _tf_compat_v1():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.layers
    import tensorflow.compat.v1 as tf1

    tf1.disable_v2_behavior()
    tf1.logging.set_verbosity(tf1.logging.ERROR)
    return tf1


def cluster_ps(backend: str) -> None:
    """The PS task of `run_cluster_tasks` (reads TFX_CLUSTER); serves until killed."""
    import json

    if backend == "tensorflow":
        tf = _tf_compat_v1()
    else:
        import tensorflux as tf
    server = tf.train.Server(tf.train.ClusterSpec(json.loads(os.environ["TFX_CLUSTER"])),
                             job_name="ps", task_index=0)
    server.join()


def run_cluster_tasks(steps: int, backend: str, attempts: int = 3) -> tuple[float, float]:
    """`run_cluster` as TF1's mnist_replica runs: 1 PS and 2 worker processes on loopback,
    each worker a server and a client training against it (`backend` "tensorflow" or
    "tensorflux-server"). A run whose task died or hung (a port taken by another process
    between choosing it and binding it: a worker then waits for its peer forever) is
    retried on new ports."""
    for attempt in range(attempts):
        try:
            return _cluster_tasks_once(steps, backend)
        except (RuntimeError, subprocess.TimeoutExpired) as err:
            if attempt == attempts - 1:
                raise
            print(f"# {backend} cluster run retried: {str(err).splitlines()[0]}", flush=True)
    raise AssertionError("unreachable")


def _free_ports(count: int) -> list:
    """`count` distinct free ports (all bound at once, so none is handed out twice)."""
    import socket

    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _cluster_tasks_once(steps: int, backend: str) -> tuple[float, float]:
    import json
    import tempfile

    ports = _free_ports(3)
    cluster = {"ps": [f"localhost:{ports[0]}"],
               "worker": [f"localhost:{port}" for port in ports[1:]]}
    env = dict(os.environ, TFX_CLUSTER=json.dumps(cluster), TF_CPP_MIN_LOG_LEVEL="3")
    script = os.path.abspath(__file__)
    # Outputs go to files: nothing blocks on a full pipe while the tasks are watched.
    logs = [tempfile.TemporaryFile("w+") for _ in range(5)]
    procs = []
    try:
        procs.append(subprocess.Popen(
            [sys.executable, script, "--cluster-ps", "--backend", backend], env=env,
            stdout=subprocess.DEVNULL, stderr=logs[0]))
        procs.extend(subprocess.Popen(
            [sys.executable, script, "--cluster-worker", "--backend", backend, "--steps",
             str(steps)], env=dict(env, TFX_TASK_INDEX=str(task)), stdout=logs[1 + 2 * task],
            stderr=logs[2 + 2 * task]) for task in range(2))
        # Every task must live until the workers end: one that dies (its port was taken)
        # leaves the others waiting for it, so the run is given up at once.
        deadline = time.monotonic() + 120 + steps
        while any(p.poll() is None for p in procs[1:]):
            died = [i for i, p in enumerate(procs) if p.poll() not in (None, 0)]
            if died or time.monotonic() > deadline:
                log = logs[2 * died[0]] if died else logs[2]
                log.seek(0)
                what = "a task exited" if died else "the run timed out"
                raise RuntimeError(f"the {backend} cluster: {what}\n{log.read()[-2000:]}")
            time.sleep(0.05)
        outs = []
        for log in logs[1::2]:
            log.seek(0)
            outs.append(log.read())
        logs[2].seek(0)
        error = logs[2].read()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        for log in logs:
            log.close()
    marks = [m for out in outs for m in _marks(out)]
    if len(marks) != 2:
        raise RuntimeError(f"the {backend} cluster run failed:\n{error[-2000:]}")
    return (statistics.median(float(m[1]) for m in marks),
            statistics.median(float(m[2]) for m in marks))


def _frameworks(args) -> dict:
    import tensorflux

    frameworks = {"tensorflux": lambda m: graph_framework(tensorflux, m, args.steps, args.jit)}
    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
        import tensorflow.compat.v1 as tf1

        tf1.disable_v2_behavior()
        tf1.logging.set_verbosity(tf1.logging.ERROR)
        frameworks["tensorflow"] = lambda m: graph_framework(tf1, m, args.steps)
    except ImportError:
        pass
    try:
        import torch

        frameworks["pytorch"] = lambda m: torch_framework(torch, m, args.steps)
    except ImportError:
        pass
    return frameworks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds (medians)")
    parser.add_argument("--models", default="mlp,cnn,lstm")
    parser.add_argument("--jit", choices=("default", "off", "on"), default="default")
    parser.add_argument("--contend", type=int, default=0, metavar="K",
                        help="CPU-bound background processes during the run")
    parser.add_argument("--contend-kind", choices=sorted(_HOGS), default="python")
    parser.add_argument("--per-round", action="store_true",
                        help="print each round's ms/step per framework (the spread)")
    parser.add_argument("--contend-session", choices=["same", "own"], default="same",
                        help="hogs in this session (default) or in a session of their own")
    parser.add_argument("--cluster", action="store_true",
                        help="time a local cluster (1 PS + 2 workers, mnist_replica MLP)")
    parser.add_argument("--cluster-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cluster-ps", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--backend", default="tensorflux", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cluster_worker:
        cluster_worker(args.steps, args.backend)
        return
    if args.cluster_ps:
        cluster_ps(args.backend)
        return
    if args.contend:
        start_contention(args.contend, args.contend_kind, args.contend_session == "own")
        time.sleep(0.5)
    print(f"# {args.contend} background processes ({args.contend_session} session); "
          f"{machine_load()}", flush=True)
    if args.cluster:
        import importlib.util

        pythonpath = os.environ.get("PYTHONPATH") or REPO
        with_tf = importlib.util.find_spec("tensorflow") is not None
        runs = {"tensorflux cli": lambda: run_cluster(args.steps, pythonpath),
                "cli separate": lambda: run_cluster(args.steps, pythonpath,
                                                    "--separate-servers"),
                "tensorflux": lambda: run_cluster_tasks(args.steps, "tensorflux-server")}
        if with_tf:
            runs["tensorflow"] = lambda: run_cluster_tasks(args.steps, "tensorflow")
        rows: dict = {name: [] for name in runs}
        for _ in range(args.rounds):  # the systems alternate: the same machine load
            for name, run in runs.items():
                rows[name].append(run())
        medians = {name: statistics.median(r[0] for r in found)
                   for name, found in rows.items()}
        print(f"{'case':<22}{'framework':<16}{'ms/step':>10}{'first ms':>10}{'vs TF':>8}")
        for name, found in rows.items():
            first = statistics.median(r[1] for r in found)
            ratio = f"{medians[name] / medians['tensorflow']:8.2f}" if with_tf else ""
            print(f"{'cluster 1ps+2w mlp':<22}{name:<16}{medians[name] * 1e3:>10.1f}"
                  f"{first * 1e3:>10.0f}{ratio}")
        print("# tensorflux cli: `tensorflux cluster` (3 processes: each worker's server runs "
              "in its program's process); cli separate: `tensorflux cluster "
              "--separate-servers` (5 processes: servers apart from the programs); tensorflux, "
              "tensorflow: 3 processes, each worker a server and its client")
        if not with_tf:
            print("# tensorflow's gRPC runtime is not importable here: no side-by-side row")
        return
    frameworks = _frameworks(args)
    if len(frameworks) == 1:
        print("# neither TensorFlow nor PyTorch is importable: tensorflux only")
    print(f"{'model':<10}{'framework':<14}{'ms/step':>10}{'examples/s':>13}{'vs TF':>8}"
          f"{'first ms':>10}")
    for model in args.models.split(","):
        rounds: dict = {name: [] for name in frameworks}
        for _ in range(args.rounds):
            for name, run in frameworks.items():
                rounds[name].append(run(model))
        results = {name: (statistics.median(r[0] for r in rows),
                          statistics.median(r[1] for r in rows), rows[0][2])
                   for name, rows in rounds.items()}
        reference = results.get("tensorflow", (None,))[0]
        if args.per_round:
            for name, rows in rounds.items():
                print(f"# {model} {name} rounds ms: "
                      + " ".join(f"{r[0] * 1e3:.1f}" for r in rows), flush=True)
        for name, (seconds, first, batch) in results.items():
            ratio = f"{seconds / reference:.2f}x" if reference else "-"
            print(f"{model:<10}{name:<14}{seconds * 1e3:>10.1f}{batch / seconds:>13.0f}"
                  f"{ratio:>8}{first * 1e3:>10.0f}", flush=True)
    print(f"# after: {machine_load()}")


if __name__ == "__main__":
    main()
