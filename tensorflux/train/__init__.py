"""`tf.train`: optimizers, checkpoints, queue runners, sessions and servers.

One import line per source module; keep edits to single lines.
"""
