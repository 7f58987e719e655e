"""The machinery behind `tf.test`: TestCase and its assertions, benchmarks, local clusters."""
