"""The op families. Importing this package registers every op, kernel and gradient."""

from tensorflux.ops import (
    array,
    math,
    state,
    control_flow,
    data_flow,
    nn,
    image,
    strings,
    sparse,
    io,
    debug,
    random,
    linalg,
    signal,
    autodiff,
    script,
    internal,
    ragged,
    boosted_trees,
    collective,
)
