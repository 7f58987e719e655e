"""Fact, the example user op behind `tf.user_ops.my_fact` (TF 1.x's template for custom ops):
it outputs one string, a fact about factorials."""

from __future__ import annotations

import numpy as np

from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape

__all__: list = []

Fact = define_op("Fact", outputs=["fact: string"], differentiable=False)


@Fact.shape_fn
def _fact_shape():
    return TensorShape(None)  # TF registers no shape function for Fact


@Fact.kernel
def _fact_kernel():
    return np.array(b"0! == 1", dtype=object)


def my_fact():
    """Example of overriding the generated code for an Op: a scalar string fact."""
    return Fact()
