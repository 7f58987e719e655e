"""`tf.contrib.losses.metric_learning`: embedding losses built from differentiable graph ops.

`pairwise_distance` is the (squared) Euclidean distance matrix with a zero diagonal;
`triplet_semihard_loss` mines, for every anchor-positive pair of the batch, the closest
negative that is still farther than the positive (FaceNet's semi-hard negative), falling
back to the anchor's farthest negative when there is none, and averages
max(margin + d(a, p) - d(a, n), 0) over the positive pairs, distances squared, as TF 1.x did.
`contrastive_loss` is Hadsell et al.'s loss on paired embeddings.
"""

from tensorflux.framework.scopes import name_scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops.array import constants as constant_ops
from tensorflux.ops.array import diagonal as diag_ops
from tensorflux.ops.array import padding as padding_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.math import binary as binary_ops
from tensorflux.ops.math import casting, comparison, matrix_product, reduction, select, unary

__all__ = ["contrastive_loss", "pairwise_distance", "triplet_semihard_loss"]


def pairwise_distance(feature, squared=False):
    """Distances between the rows of `feature` ([n, d] -> [n, n], zero diagonal).

    Args:
        feature: 2-D float tensor of embeddings.
        squared: return squared distances (otherwise their square roots).

    Returns:
        A [n, n] float tensor.
    """
    feature = convert_to_tensor(feature, name="feature")
    sq_norms = reduction.reduce_sum(unary.square(feature), axis=1, keepdims=True)
    dist_sq = binary_ops.add(sq_norms, shape_ops.transpose(sq_norms)) - 2.0 * (
        matrix_product.matmul(feature, feature, transpose_b=True))
    dist_sq = binary_ops.maximum(dist_sq, 0.0)
    error_mask = comparison.less_equal(dist_sq, 0.0)
    if squared:
        dist = dist_sq
    else:
        # The tiny offset keeps sqrt's gradient finite where a distance is zero.
        dist = unary.sqrt(dist_sq + casting.cast(error_mask, feature.dtype) * 1e-16)
    dist = dist * casting.cast(comparison.logical_not(error_mask), feature.dtype)
    num_data = shape_ops.shape(feature)[0]
    off_diagonal = constant_ops.ones_like(dist) - diag_ops.diag(
        constant_ops.ones([num_data], feature.dtype))
    return dist * off_diagonal


def _masked_maximum(data, mask, axis=1):
    """Per-row maximum of `data` over the entries where `mask` is 1 (keepdims)."""
    minimums = reduction.reduce_min(data, axis, keepdims=True)
    return reduction.reduce_max((data - minimums) * mask, axis, keepdims=True) + minimums


def _masked_minimum(data, mask, axis=1):
    """Per-row minimum of `data` over the entries where `mask` is 1 (keepdims)."""
    maximums = reduction.reduce_max(data, axis, keepdims=True)
    return reduction.reduce_min((data - maximums) * mask, axis, keepdims=True) + maximums


def triplet_semihard_loss(labels, embeddings, margin=1.0):
    """Triplet loss with semi-hard negative mining (FaceNet, arXiv:1503.03832).

    Args:
        labels: 1-D int tensor [batch] of class ids.
        embeddings: 2-D float tensor [batch, dim] (usually l2-normalised).
        margin: the margin between positive and negative squared distances.

    Returns:
        A float32 scalar: the mean hinge over all anchor-positive pairs.

    Raises:
        ValueError: `labels` is not 1-D or `embeddings` not 2-D (statically known).
    """
    with name_scope("triplet_semihard_loss"):
        labels = convert_to_tensor(labels, name="labels")
        embeddings = convert_to_tensor(embeddings, name="embeddings")
        if labels.shape.ndims is not None and labels.shape.ndims not in (1, 2):
            raise ValueError(f"triplet_semihard_loss: labels must be 1-D [batch], got shape "
                             f"{labels.shape}")
        if embeddings.shape.ndims is not None and embeddings.shape.ndims != 2:
            raise ValueError("triplet_semihard_loss: embeddings must be 2-D [batch, dim], "
                             f"got shape {embeddings.shape}")
        labels = shape_ops.reshape(labels, [-1, 1])
        pdist = pairwise_distance(embeddings, squared=True)
        adjacency = comparison.equal(labels, shape_ops.transpose(labels))
        adjacency_not = comparison.logical_not(adjacency)
        batch_size = shape_ops.shape(labels)[0]

        # Row (b*i + a) of the tiled matrix asks: which n satisfy d(a, n) > d(a, p=i)?
        pdist_tile = padding_ops.tile(pdist, [batch_size, 1])
        mask = comparison.logical_and(
            padding_ops.tile(adjacency_not, [batch_size, 1]),
            comparison.greater(pdist_tile,
                               shape_ops.reshape(shape_ops.transpose(pdist), [-1, 1])))
        mask_final = shape_ops.reshape(
            comparison.greater(reduction.reduce_sum(casting.cast(mask, pdist.dtype), 1,
                                                    keepdims=True), 0.0),
            [batch_size, batch_size])
        mask_final = shape_ops.transpose(mask_final)

        adjacency_not = casting.cast(adjacency_not, pdist.dtype)
        mask = casting.cast(mask, pdist.dtype)
        negatives_outside = shape_ops.transpose(shape_ops.reshape(
            _masked_minimum(pdist_tile, mask), [batch_size, batch_size]))
        negatives_inside = padding_ops.tile(_masked_maximum(pdist, adjacency_not),
                                            [1, batch_size])
        semi_hard_negatives = select.where(mask_final, negatives_outside, negatives_inside)

        loss_mat = (pdist - semi_hard_negatives) + margin
        mask_positives = casting.cast(adjacency, pdist.dtype) - diag_ops.diag(
            constant_ops.ones([batch_size], pdist.dtype))
        num_positives = reduction.reduce_sum(mask_positives)
        return binary_ops.truediv(
            reduction.reduce_sum(binary_ops.maximum(loss_mat * mask_positives, 0.0)),
            num_positives, name="triplet_semihard_loss")


def contrastive_loss(labels, embeddings_anchor, embeddings_positive, margin=1.0):
    """Contrastive loss of paired embeddings (Hadsell, Chopra & LeCun 2006).

    Args:
        labels: 1-D tensor [batch]: 1 for a similar pair, 0 for a dissimilar one.
        embeddings_anchor: 2-D float tensor [batch, dim].
        embeddings_positive: 2-D float tensor [batch, dim].
        margin: dissimilar pairs closer than this are penalised.

    Returns:
        A float32 scalar: mean of y * d^2 + (1 - y) * max(margin - d, 0)^2.
    """
    with name_scope("contrastive_loss"):
        anchor = convert_to_tensor(embeddings_anchor, name="embeddings_anchor")
        positive = convert_to_tensor(embeddings_positive, name="embeddings_positive")
        distances = unary.sqrt(reduction.reduce_sum(unary.square(anchor - positive), 1))
        labels = casting.cast(labels, distances.dtype)
        return reduction.reduce_mean(
            labels * unary.square(distances)
            + (1.0 - labels) * unary.square(binary_ops.maximum(margin - distances, 0.0)),
            name="contrastive_loss")
