"""`tf.contrib.learn.io`: the NumPy and pandas input_fns (contrib's `shuffle=True` default)."""

from __future__ import annotations

from tensorflux.contrib import missing as _missing
from tensorflux.estimator import inputs as core_inputs

__all__ = ["numpy_input_fn", "pandas_input_fn"]


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=True, queue_capacity=1000,
                   num_threads=1):
    """`tf.estimator.inputs.numpy_input_fn` with contrib's default `shuffle=True`."""
    return core_inputs.numpy_input_fn(x, y, batch_size=batch_size, num_epochs=num_epochs,
                                      shuffle=shuffle, queue_capacity=queue_capacity,
                                      num_threads=num_threads)


def pandas_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=True, queue_capacity=1000,
                    num_threads=1, target_column="target"):
    """`tf.estimator.inputs.pandas_input_fn` with contrib's default `shuffle=True`."""
    return core_inputs.pandas_input_fn(x, y, batch_size=batch_size, num_epochs=num_epochs,
                                       shuffle=shuffle, queue_capacity=queue_capacity,
                                       num_threads=num_threads, target_column=target_column)


__getattr__ = _missing.module_getattr("contrib.learn.io", {
    "*": "tf.data (TFRecordDataset + tf.parse_example) in an input_fn",
})
