"""`tf.nn`: neural-network ops, RNN helpers and losses. One import line per source module."""
