"""Boosted trees: evaluating and growing a tree ensemble kept in variables, and the bucket
boundaries of numeric features.

The family facade: importing it registers every op and kernel of the family.
"""

from tensorflux.ops.boosted_trees import (
    prediction,
    growing,
    quantiles,
)
