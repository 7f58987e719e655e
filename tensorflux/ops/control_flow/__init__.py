"""Control flow: Switch/Merge/Enter/Exit/NextIteration, cond, while_loop, the higher-order
functions, and their gradients.

The family facade: importing it registers every op, kernel and gradient of the family.
"""

from tensorflux.ops.control_flow import (
    primitives,
    ref_helpers,
    context,
    while_gradients,
    util,
    while_loop,
    functional,
    function_call,
    functional_control,
    polymorphic_function,
    defun,
)
