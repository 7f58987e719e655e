"""Skip-gram word2vec with NCE loss, in the style of TF1's word2vec_basic tutorial.

A synthetic corpus stands in for text8: words belong to topics, and each sentence draws its
words (Zipf-distributed) from one topic, so words of a topic share contexts. The vocabulary is
sorted by frequency, which is what tf.nn.nce_loss's default log-uniform sampler assumes.
Training feeds (center word, context word) batches from a sliding window; the embedding lookup
makes the gradients IndexedSlices, so each step updates only the rows of the words in the batch.
At the end, each word's nearest neighbours by cosine similarity should be words of its topic.

    python examples/word2vec_skipgram.py --steps 3000
"""

from __future__ import annotations

import argparse
import collections

import numpy as np

import tensorflux as tf


def build_corpus(topics: int, words_per_topic: int, sentences: int, sentence_length: int,
                 seed: int = 0):
    """(data: word ids sorted by frequency, topic_of: topic per id, words: names per id)."""
    rng = np.random.RandomState(seed)
    zipf = 1.0 / np.arange(1, words_per_topic + 1)
    zipf /= zipf.sum()
    tokens = []
    for _ in range(sentences):
        topic = rng.randint(topics)
        picks = rng.choice(words_per_topic, size=sentence_length, p=zipf)
        tokens.extend(f"t{topic}w{w}" for w in picks)
    counts = collections.Counter(tokens).most_common()
    index = {word: i for i, (word, _) in enumerate(counts)}
    words = [word for word, _ in counts]
    topic_of = np.array([int(word[1:word.index("w")]) for word in words])
    return np.array([index[t] for t in tokens], np.int64), topic_of, words


class SkipGramBatcher:
    """word2vec_basic's generate_batch: (center, context) pairs from a sliding window."""

    def __init__(self, data: np.ndarray, skip_window: int, num_skips: int, seed: int = 0):
        self.data, self.skip_window, self.num_skips = data, skip_window, num_skips
        self.position = 0
        self.rng = np.random.RandomState(seed)

    def next_batch(self, batch_size: int):
        assert batch_size % self.num_skips == 0
        centers = np.empty(batch_size, np.int64)
        contexts = np.empty((batch_size, 1), np.int64)
        span = 2 * self.skip_window + 1
        offsets = [o for o in range(-self.skip_window, self.skip_window + 1) if o != 0]
        for i in range(batch_size // self.num_skips):
            if self.position + span > len(self.data):
                self.position = 0
            middle = self.position + self.skip_window
            chosen = self.rng.choice(offsets, self.num_skips, replace=False)
            rows = slice(i * self.num_skips, (i + 1) * self.num_skips)
            centers[rows] = self.data[middle]
            contexts[rows, 0] = self.data[middle + chosen]
            self.position += 1
        return centers, contexts


def build_graph(vocabulary_size: int, embedding_size: int, num_sampled: int,
                learning_rate: float):
    train_inputs = tf.placeholder(tf.int64, [None], name="train_inputs")
    train_labels = tf.placeholder(tf.int64, [None, 1], name="train_labels")
    with tf.name_scope("embeddings"):
        embeddings = tf.Variable(tf.random_uniform([vocabulary_size, embedding_size], -1.0, 1.0),
                                 name="embeddings")
        embed = tf.nn.embedding_lookup(embeddings, train_inputs)
    with tf.name_scope("weights"):
        nce_weights = tf.Variable(tf.truncated_normal([vocabulary_size, embedding_size],
                                                      stddev=1.0 / np.sqrt(embedding_size)),
                                  name="nce_weights")
    with tf.name_scope("biases"):
        nce_biases = tf.Variable(tf.zeros([vocabulary_size]), name="nce_biases")
    with tf.name_scope("loss"):
        loss = tf.reduce_mean(tf.nn.nce_loss(weights=nce_weights, biases=nce_biases,
                                             labels=train_labels, inputs=embed,
                                             num_sampled=num_sampled,
                                             num_classes=vocabulary_size))
    tf.summary.scalar("loss", loss)
    optimizer = tf.train.GradientDescentOptimizer(learning_rate)
    grads_and_vars = optimizer.compute_gradients(loss)
    train_op = optimizer.apply_gradients(grads_and_vars)
    norm = tf.sqrt(tf.reduce_sum(tf.square(embeddings), 1, keepdims=True))
    normalized = embeddings / norm
    similarity = tf.matmul(normalized, normalized, transpose_b=True)
    sparse = {var.op.name: isinstance(grad, tf.IndexedSlices) for grad, var in grads_and_vars}
    return train_inputs, train_labels, embeddings, loss, train_op, similarity, sparse


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--embedding_size", type=int, default=16)
    parser.add_argument("--num_sampled", type=int, default=8, help="negative samples")
    parser.add_argument("--skip_window", type=int, default=2)
    parser.add_argument("--num_skips", type=int, default=4)
    parser.add_argument("--learning_rate", type=float, default=1.0)
    parser.add_argument("--topics", type=int, default=5)
    parser.add_argument("--words_per_topic", type=int, default=10)
    parser.add_argument("--sentences", type=int, default=600)
    parser.add_argument("--neighbours", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    tf.logging.set_verbosity(tf.logging.INFO)

    data, topic_of, words = build_corpus(args.topics, args.words_per_topic, args.sentences,
                                         sentence_length=12, seed=args.seed)
    batcher = SkipGramBatcher(data, args.skip_window, args.num_skips, seed=args.seed)
    losses = []
    with tf.Graph().as_default():
        tf.set_random_seed(args.seed)
        inputs, labels, embeddings, loss, train_op, similarity, sparse = build_graph(
            len(words), args.embedding_size, args.num_sampled, args.learning_rate)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(args.steps):
                centers, contexts = batcher.next_batch(args.batch_size)
                _, value = sess.run([train_op, loss], {inputs: centers, labels: contexts})
                losses.append(float(value))
                if step % 1000 == 0:
                    tf.logging.info("step %d: average loss %.4f", step,
                                    np.mean(losses[-1000:]))
            sim = sess.run(similarity)
    np.fill_diagonal(sim, -np.inf)
    nearest = np.argsort(-sim, axis=1)[:, :args.neighbours]
    same_topic = float(np.mean(topic_of[nearest] == topic_of[:, None]))
    for word_id in range(min(5, len(words))):
        tf.logging.info("nearest to %s: %s", words[word_id],
                        ", ".join(words[k] for k in nearest[word_id]))
    tf.logging.info("neighbours sharing the word's topic: %.3f (chance %.3f)", same_topic,
                    1.0 / args.topics)
    return {"losses": losses, "same_topic_fraction": same_topic, "sparse_gradients": sparse,
            "nearest": nearest, "words": words}


if __name__ == "__main__":
    main()
