"""Shared by the tf.metrics tests: stream feeds through (value, update_op) pairs."""

import tensorflux as tf


def stream(pairs, feeds):
    """Runs every update per feed; returns (values before, [updates], [values after])."""
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        before = sess.run([v for v, _ in pairs])
        updates, values = [], []
        for feed in feeds:
            updates.append(sess.run([u for _, u in pairs], feed))
            values.append(sess.run([v for v, _ in pairs]))
        return before, updates, values
