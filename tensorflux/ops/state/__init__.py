"""State: variables, variable scopes and stores, partitioned variables, initializers and the
optimizers' update ops.

The family facade: importing it registers every op, kernel and gradient of the family.
"""

from tensorflux.ops.state import (
    variable_ops,
    variables,
    variable_scope,
    variable_store,
    partitioned,
    training_ops,
    initializers,
    template,
    resource_variable_ops,
    resource_variables,
    resource_training_ops,
)
