"""Python functions as graph ops: py_func, numpy_function, py_function.

The family facade: importing it registers every op, kernel and gradient of the family.
"""

from tensorflux.ops.script import (
    py_func,
    user_ops,
)
