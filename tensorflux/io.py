"""`tf.io`: file and record I/O, parsing and serialization (TF 1.15's `tf.io` names)."""

