"""`tf.queue`: the queue classes."""

