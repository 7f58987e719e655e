"""`tf.user_ops`: the example user op of TF 1.x."""

from tensorflux.ops.script.user_ops import my_fact
