"""Program scaffolding TF1 programs use: `tf.app`, `tf.flags`, `tf.logging`, `tf.gfile`, version.

Pure Python on the standard library; nothing here touches graphs or sessions.
"""
