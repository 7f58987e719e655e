"""`tf.contrib.learn.ops` (TF 0.12-1.x): `categorical_variable` and `embedding_lookup`."""

from __future__ import annotations

from tensorflux.ops.nn import functions as embedding_ops
from tensorflux.ops.state import variable_scope

__all__ = ["categorical_variable", "embedding_lookup"]


def embedding_lookup(params, ids, name="embedding_lookup"):
    """The rows of `params` at `ids` (`tf.nn.embedding_lookup`)."""
    return embedding_ops.embedding_lookup(params, ids, name=name)


def categorical_variable(tensor_in, n_classes, embedding_size, name):
    """Embeddings `[..., embedding_size]` of the ids in `tensor_in`, from the variable
    `<name>/<name>_embeddings` of shape `[n_classes, embedding_size]`.

    Raises:
        ValueError: n_classes or embedding_size < 1.
    """
    if n_classes < 1 or embedding_size < 1:
        raise ValueError(f"categorical_variable {name!r}: n_classes ({n_classes}) and "
                         f"embedding_size ({embedding_size}) must be >= 1.")
    with variable_scope.variable_scope(name):
        embeddings = variable_scope.get_variable(name + "_embeddings",
                                                 [n_classes, embedding_size])
        return embedding_ops.embedding_lookup(embeddings, tensor_in)
