"""Training-step throughput: an MLP, a CNN and an LSTM language model.

The same TF1 graph code runs on tensorflux and, when importable, on TensorFlow's tf.compat.v1
in the same process; PyTorch runs equivalent eager models when importable. Prints ms/step and
examples/s per model and framework, and the ratio to TensorFlow.

    python bench/training.py [--steps N] [--models mlp,cnn,lstm] [--jit default|off|on]

`--jit` sets tensorflux's `global_jit_level` (elementwise fusion); the `first s` column is the
first training step's wall time (plan building plus compiled-kernel loading or compiling).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _median_step(run, steps: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        run()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


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


GRAPHS = {"mlp": mlp_graph, "cnn": cnn_graph, "lstm": lstm_graph}


def graph_framework(tf, model: str, steps: int, jit: str = "default"):
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        train, feed, batch = GRAPHS[model](tf)
        init = tf.global_variables_initializer()
    config = None
    if jit != "default":
        levels = tf.OptimizerOptions
        config = tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=levels(
            global_jit_level=levels.ON_1 if jit == "on" else levels.OFF)))
    with tf.Session(graph=graph, config=config) as sess:
        sess.run(init)
        start = time.perf_counter()
        sess.run(train, feed)
        first = time.perf_counter() - start
        return _median_step(lambda: sess.run(train, feed), steps), batch, first


def torch_framework(torch, model: str, steps: int):
    nn = torch.nn
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

    def step():
        optimizer.zero_grad()
        loss_fn(net(x), y).backward()
        optimizer.step()

    return _median_step(step, steps), batch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--models", default="mlp,cnn,lstm")
    parser.add_argument("--jit", choices=("default", "off", "on"), default="default")
    args = parser.parse_args()
    import tensorflux

    frameworks = {"tensorflux": lambda m: graph_framework(tensorflux, m, args.steps, args.jit)}
    try:
        import os

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
    print(f"{'model':<8}{'framework':<14}{'ms/step':>10}{'examples/s':>13}{'vs TF':>8}"
          f"{'first s':>9}")
    for model in args.models.split(","):
        results = {name: run(model) for name, run in frameworks.items()}
        reference = results.get("tensorflow", (None,))[0]
        for name, (seconds, batch, *first) in results.items():
            ratio = f"{seconds / reference:.2f}x" if reference else "-"
            first = f"{first[0]:.2f}" if first else "-"
            print(f"{model:<8}{name:<14}{seconds * 1e3:>10.1f}{batch / seconds:>13.0f}"
                  f"{ratio:>8}{first:>9}")


if __name__ == "__main__":
    main()
