"""Random ops: stateful and stateless sampling, gamma reparameterization and seeds.

The family facade: importing it registers every op, kernel and gradient of the family.
"""

from tensorflux.ops.random import (
    stateful,
    stateless,
    gamma,
    seed,
)
