"""Automatic differentiation: tf.gradients, custom gradients and the gradient checker.

The family facade: importing it registers every op, kernel and gradient of the family.
"""

from tensorflux.ops.autodiff import (
    gradients,
    checker,
    custom_gradient,
)
