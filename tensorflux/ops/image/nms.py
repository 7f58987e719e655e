"""Non-max suppression: NonMaxSuppression (V1-V5), NonMaxSuppressionWithOverlaps and
CombinedNonMaxSuppression, with the `tf.image.non_max_suppression*` wrappers.

Greedy selection follows TensorFlow's CPU kernel: candidates are boxes whose score is strictly
above `score_threshold`; the best remaining candidate (highest score, lowest index on ties) is
selected, and every candidate whose IoU with it is strictly above `iou_threshold` is dropped.
Soft-NMS (V5 with `soft_nms_sigma > 0`) instead decays scores by `exp(-iou^2 / (2 sigma))`
(whatever the IoU threshold, as TF's kernel does) and drops candidates whose decayed score
falls to `score_threshold` or below. Boxes are corners `[y1, x1, y2, x2]` in either order; a box
of zero area overlaps nothing.

A kernel step loops over *selections* (at most `max_output_size`), each one a vectorised pass
over all candidates; no per-pair matrix is built, so memory stays linear in the box count.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape

__all__: list = []

_T = "T: {float16, float32} = float32"
_T_THRESHOLD = "T_threshold: {float16, float32} = float32"


def _invalid(message: str):
    return errors.InvalidArgumentError(None, None, message)


# -- similarity and the greedy loop -------------------------------------------------------------

def _iou(low_i, high_i, area_i, low, high, areas):
    extent = np.minimum(high_i, high) - np.maximum(low_i, low)
    inter = np.prod(np.maximum(extent, np.float32(0)), axis=1)
    union = area_i + areas - inter
    valid = (area_i > 0) & (areas > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(valid, inter / np.where(valid, union, 1), np.float32(0))


class _BoxIoU:
    """TF's corner-order-free IoU (a box of zero area overlaps nothing), in float32."""

    def __init__(self, boxes: np.ndarray):
        boxes = boxes.astype(np.float32, copy=False)
        self.low = np.minimum(boxes[:, :2], boxes[:, 2:])
        self.high = np.maximum(boxes[:, :2], boxes[:, 2:])
        self.areas = np.prod(self.high - self.low, axis=1)

    def __call__(self, i, others):
        """IoU of box i with the boxes `others` (an index array)."""
        return _iou(self.low[i], self.high[i], self.areas[i], self.low[others],
                    self.high[others], self.areas[others])

    def in_order(self, order):
        """A function (p, start) -> IoU of box order[p] with order[start:], using views."""
        low, high, areas = self.low[order], self.high[order], self.areas[order]

        def row(p, start):
            return _iou(low[p], high[p], areas[p], low[start:], high[start:], areas[start:])

        return row


class _Overlaps:
    """Similarity read from a precomputed matrix: candidate j vs selected i is overlaps[j, i]."""

    def __init__(self, overlaps: np.ndarray):
        self.overlaps = overlaps

    def __call__(self, i, others):
        return self.overlaps[others, i]

    def in_order(self, order):
        return lambda p, start: self.overlaps[order[start:], order[p]]


def _greedy(similarity, scores, max_output, sim_threshold, score_threshold, sigma=0.0):
    """(selected indices int32, their (decayed) scores) of greedy (soft-)NMS."""
    current = scores.astype(np.float32)
    candidates = np.flatnonzero(current > np.float32(score_threshold))
    if sigma > 0:
        return _soft_greedy(similarity, current, candidates, max_output, score_threshold, sigma)
    # Hard NMS walks the candidates best first (stable: lower index first on ties). Each
    # selection suppresses within the tail after it, computed on contiguous views.
    order = candidates[np.argsort(-current[candidates], kind="stable")]
    row = similarity.in_order(order)
    alive = np.ones(order.size, bool)
    threshold = np.float32(sim_threshold)
    picked = []
    p = 0
    while p < order.size and len(picked) < max_output:
        picked.append(p)
        alive[p + 1:] &= ~(row(p, p + 1) > threshold)
        following = alive[p + 1:]
        if not following.any():
            break
        p += 1 + int(np.argmax(following))
    selected = order[np.asarray(picked, np.int64)]
    return selected.astype(np.int32), current[selected]


def _soft_greedy(similarity, current, candidates, max_output, score_threshold, sigma):
    scale = np.float32(-0.5 / sigma)
    floor = np.float32(score_threshold)
    selected, selected_scores = [], []
    while candidates.size and len(selected) < max_output:
        pick = np.argmax(current[candidates])  # first maximum: lower index on ties
        best = candidates[pick]
        selected.append(best)
        selected_scores.append(current[best])
        candidates = np.delete(candidates, pick)
        # NOTE: as in TF, soft-NMS ignores the similarity threshold: every overlap decays.
        sim = np.asarray(similarity(best, candidates), np.float32)
        current[candidates] *= np.exp(scale * sim * sim).astype(np.float32)
        candidates = candidates[current[candidates] > floor]
    return (np.asarray(selected, np.int32).reshape(-1),
            np.asarray(selected_scores, np.float32).reshape(-1))


# -- argument checks ----------------------------------------------------------------------------

def _check_boxes(boxes, scores) -> None:
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise _invalid(f"boxes must be 2-D with shape [num_boxes, 4], got shape "
                       f"{list(boxes.shape)}")
    if scores.ndim != 1:
        raise _invalid(f"scores must be 1-D, got shape {list(scores.shape)}")
    if scores.shape[0] != boxes.shape[0]:
        raise _invalid(f"scores has incompatible shape: {scores.shape[0]} scores for "
                       f"{boxes.shape[0]} boxes")


def _scalar(value, what: str):
    if np.ndim(value) != 0:
        raise _invalid(f"{what} must be 0-D, got shape {list(np.shape(value))}")
    return np.asarray(value).item()


def _max_output(value) -> int:
    size = int(_scalar(value, "max_output_size"))
    if size < 0:
        raise _invalid(f"max_output_size must be non-negative, got {size}")
    return size


def _iou_threshold(value, what: str = "iou_threshold") -> float:
    threshold = float(_scalar(value, what))
    if not 0.0 <= threshold <= 1.0:
        raise _invalid(f"{what} must be in [0, 1], got {threshold}")
    return threshold


def _pad(values: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros(size, values.dtype)
    out[:values.size] = values
    return out


# -- shape functions ----------------------------------------------------------------------------

def _rank(value: TensorShape, rank: int, what: str) -> TensorShape:
    """`value` with rank `rank`; the ValueError is worded as TF's shape functions word it."""
    if value.ndims is not None and value.ndims != rank:
        raise ValueError(f"Shape must be rank {rank} but is rank {value.ndims} "
                         f"({what} shape {value})")
    return value.with_rank(rank)


def _scalar_shape(value: TensorShape, what: str) -> None:
    _rank(value, 0, what)


def _boxes_shape(boxes: TensorShape, scores: TensorShape, max_output_size, *scalars) -> None:
    boxes = _rank(boxes, 2, "boxes")
    if boxes._dim_list[1] is not None and boxes._dim_list[1] != 4:
        raise ValueError(f"Dimension must be 4 but is {boxes._dim_list[1]}: boxes must have 4 "
                         f"coordinates per box, got shape {boxes}")
    scores = _rank(scores, 1, "scores")
    n_boxes, n_scores = boxes._dim_list[0], scores._dim_list[0]
    if n_boxes is not None and n_scores is not None and n_boxes != n_scores:
        raise ValueError(f"Dimensions must be equal, but are {n_boxes} and "
                         f"{n_scores}: boxes {boxes} and scores {scores} disagree on the "
                         f"number of boxes")
    for i, value in enumerate((max_output_size, *scalars)):
        _scalar_shape(value, "max_output_size" if i == 0 else "threshold")


def _selected_shape(max_output_size, pad: bool) -> TensorShape:
    if pad and max_output_size is not None:
        return TensorShape([int(max_output_size)])
    return TensorShape([None])


# -- NonMaxSuppression (V1, V2, V3) -------------------------------------------------------------

NonMaxSuppression = define_op(
    "NonMaxSuppression",
    inputs=["boxes: float32", "scores: float32", "max_output_size: int32"],
    outputs=["selected_indices: int32"], attrs=["iou_threshold: float = 0.5"],
    differentiable=False)


@NonMaxSuppression.shape_fn
def _nms_v1_shape(boxes, scores, max_output_size):
    _boxes_shape(boxes, scores, max_output_size)
    return TensorShape([None])


_LOWEST = float(np.finfo(np.float32).min)


def _nms(boxes, scores, max_output_size, iou_threshold, score_threshold=None):
    """(selected indices, max output size) of greedy NMS; no score floor without
    `score_threshold`."""
    _check_boxes(boxes, scores)
    size = _max_output(max_output_size)
    threshold = _iou_threshold(iou_threshold)
    floor = _LOWEST if score_threshold is None else float(_scalar(score_threshold,
                                                                  "score_threshold"))
    return _greedy(_BoxIoU(boxes), scores, size, threshold, floor)[0], size


@NonMaxSuppression.kernel
def _nms_v1_kernel(boxes, scores, max_output_size, *, iou_threshold):
    return _nms(boxes, scores, max_output_size, iou_threshold)[0]


NonMaxSuppressionV2 = define_op(
    "NonMaxSuppressionV2",
    inputs=["boxes: T", "scores: T", "max_output_size: int32", "iou_threshold: T_threshold"],
    outputs=["selected_indices: int32"], attrs=[_T, _T_THRESHOLD], differentiable=False)


@NonMaxSuppressionV2.shape_fn
def _nms_v2_shape(boxes, scores, max_output_size, iou_threshold):
    _boxes_shape(boxes, scores, max_output_size, iou_threshold)
    return TensorShape([None])


@NonMaxSuppressionV2.kernel
def _nms_v2_kernel(boxes, scores, max_output_size, iou_threshold):
    return _nms(boxes, scores, max_output_size, iou_threshold)[0]


NonMaxSuppressionV3 = define_op(
    "NonMaxSuppressionV3",
    inputs=["boxes: T", "scores: T", "max_output_size: int32", "iou_threshold: T_threshold",
            "score_threshold: T_threshold"],
    outputs=["selected_indices: int32"], attrs=[_T, _T_THRESHOLD], differentiable=False)


@NonMaxSuppressionV3.shape_fn
def _nms_v3_shape(boxes, scores, max_output_size, iou_threshold, score_threshold):
    _boxes_shape(boxes, scores, max_output_size, iou_threshold, score_threshold)
    return TensorShape([None])


@NonMaxSuppressionV3.kernel
def _nms_v3_kernel(boxes, scores, max_output_size, iou_threshold, score_threshold):
    return _nms(boxes, scores, max_output_size, iou_threshold, score_threshold)[0]


# -- NonMaxSuppressionV4 (padded) and V5 (with scores, soft-NMS) --------------------------------

NonMaxSuppressionV4 = define_op(
    "NonMaxSuppressionV4",
    inputs=["boxes: T", "scores: T", "max_output_size: int32", "iou_threshold: T_threshold",
            "score_threshold: T_threshold"],
    outputs=["selected_indices: int32", "valid_outputs: int32"],
    attrs=[_T, _T_THRESHOLD, "pad_to_max_output_size: bool = False"], differentiable=False)


@NonMaxSuppressionV4.shape_fn(value_inputs=("max_output_size",))
def _nms_v4_shape(boxes, scores, max_output_size, iou_threshold, score_threshold, *,
                  pad_to_max_output_size):
    _boxes_shape(boxes, scores, TensorShape([]), iou_threshold, score_threshold)
    return [_selected_shape(max_output_size, pad_to_max_output_size), TensorShape([])]


@NonMaxSuppressionV4.kernel
def _nms_v4_kernel(boxes, scores, max_output_size, iou_threshold, score_threshold, *,
                   pad_to_max_output_size):
    selected, size = _nms(boxes, scores, max_output_size, iou_threshold, score_threshold)
    valid = np.int32(selected.size)
    if pad_to_max_output_size:
        selected = _pad(selected, size)
    return selected, valid


NonMaxSuppressionV5 = define_op(
    "NonMaxSuppressionV5",
    inputs=["boxes: T", "scores: T", "max_output_size: int32", "iou_threshold: T",
            "score_threshold: T", "soft_nms_sigma: T"],
    outputs=["selected_indices: int32", "selected_scores: T", "valid_outputs: int32"],
    attrs=[_T, "pad_to_max_output_size: bool = False"], differentiable=False)


@NonMaxSuppressionV5.shape_fn(value_inputs=("max_output_size",))
def _nms_v5_shape(boxes, scores, max_output_size, iou_threshold, score_threshold,
                  soft_nms_sigma, *, pad_to_max_output_size):
    _boxes_shape(boxes, scores, TensorShape([]), iou_threshold, score_threshold, soft_nms_sigma)
    selected = _selected_shape(max_output_size, pad_to_max_output_size)
    return [selected, selected, TensorShape([])]


@NonMaxSuppressionV5.kernel
def _nms_v5_kernel(boxes, scores, max_output_size, iou_threshold, score_threshold,
                   soft_nms_sigma, *, pad_to_max_output_size):
    _check_boxes(boxes, scores)
    size = _max_output(max_output_size)
    threshold = _iou_threshold(iou_threshold)
    floor = float(_scalar(score_threshold, "score_threshold"))
    sigma = float(_scalar(soft_nms_sigma, "soft_nms_sigma"))
    if not sigma >= 0:
        raise _invalid(f"soft_nms_sigma must be non-negative, got {sigma}")
    selected, kept = _greedy(_BoxIoU(boxes), scores, size, threshold, floor, sigma)
    valid = np.int32(selected.size)
    if pad_to_max_output_size:
        selected, kept = _pad(selected, size), _pad(kept, size)
    return selected, kept.astype(scores.dtype), valid


# -- NonMaxSuppressionWithOverlaps --------------------------------------------------------------

NonMaxSuppressionWithOverlaps = define_op(
    "NonMaxSuppressionWithOverlaps",
    inputs=["overlaps: float32", "scores: float32", "max_output_size: int32",
            "overlap_threshold: float32", "score_threshold: float32"],
    outputs=["selected_indices: int32"], differentiable=False)


@NonMaxSuppressionWithOverlaps.shape_fn
def _nms_overlaps_shape(overlaps, scores, max_output_size, overlap_threshold, score_threshold):
    overlaps = overlaps.with_rank(2)
    if overlaps._dim_list[0] is not None and overlaps._dim_list[1] is not None and (
            overlaps._dim_list[0] != overlaps._dim_list[1]):
        raise ValueError(f"overlaps must be square, got shape {overlaps}")
    scores = scores.with_rank(1)
    for value in (max_output_size, overlap_threshold, score_threshold):
        _scalar_shape(value, "max_output_size and thresholds")
    return TensorShape([None])


@NonMaxSuppressionWithOverlaps.kernel
def _nms_overlaps_kernel(overlaps, scores, max_output_size, overlap_threshold, score_threshold):
    if overlaps.ndim != 2 or overlaps.shape[0] != overlaps.shape[1]:
        raise _invalid(f"overlaps must be square, got shape {list(overlaps.shape)}")
    if scores.ndim != 1 or scores.shape[0] != overlaps.shape[0]:
        raise _invalid(f"scores must be 1-D with {overlaps.shape[0]} elements, got shape "
                       f"{list(scores.shape)}")
    size = _max_output(max_output_size)
    threshold = float(_scalar(overlap_threshold, "overlap_threshold"))
    floor = float(_scalar(score_threshold, "score_threshold"))
    return _greedy(_Overlaps(overlaps), scores, size, threshold, floor)[0]


# -- CombinedNonMaxSuppression -----------------------------------------------------------------

CombinedNonMaxSuppression = define_op(
    "CombinedNonMaxSuppression",
    inputs=["boxes: float32", "scores: float32", "max_output_size_per_class: int32",
            "max_total_size: int32", "iou_threshold: float32", "score_threshold: float32"],
    outputs=["nmsed_boxes: float32", "nmsed_scores: float32", "nmsed_classes: float32",
             "valid_detections: int32"],
    attrs=["pad_per_class: bool = False", "clip_boxes: bool = True"], differentiable=False)


def _detections(per_class, num_classes, total, pad_per_class):
    if per_class is None or total is None:
        return None
    if pad_per_class:
        if num_classes is None:
            return None
        return int(min(int(per_class) * num_classes, int(total)))
    return int(total)


@CombinedNonMaxSuppression.shape_fn(value_inputs=("max_output_size_per_class",
                                                  "max_total_size"))
def _combined_nms_shape(boxes, scores, max_output_size_per_class, max_total_size,
                        iou_threshold, score_threshold, *, pad_per_class):
    boxes = boxes.with_rank(4)
    scores = scores.with_rank(3)
    if boxes._dim_list[3] is not None and boxes._dim_list[3] != 4:
        raise ValueError(f"boxes must have 4 coordinates per box, got shape {boxes}")
    q, classes = boxes._dim_list[2], scores._dim_list[2]
    if None not in (q, classes) and q not in (1, classes):
        raise ValueError(f"boxes' third dimension must be 1 or the number of classes "
                         f"{classes}, got {q}")
    if max_total_size is not None and int(max_total_size) <= 0:
        raise ValueError(f"max_total_size must be > 0, got {int(max_total_size)}")
    batch = boxes._dim_list[0] if boxes._dim_list[0] is not None else scores._dim_list[0]
    size = _detections(max_output_size_per_class, classes, max_total_size, pad_per_class)
    return [TensorShape([batch, size, 4]), TensorShape([batch, size]),
            TensorShape([batch, size]), TensorShape([batch])]


@CombinedNonMaxSuppression.kernel
def _combined_nms_kernel(boxes, scores, max_output_size_per_class, max_total_size,
                         iou_threshold, score_threshold, *, pad_per_class, clip_boxes):
    if boxes.ndim != 4 or boxes.shape[3] != 4 or scores.ndim != 3 or (
            scores.shape[:2] != boxes.shape[:2]) or boxes.shape[2] not in (1, scores.shape[2]):
        raise _invalid(f"boxes must be [batch, num_boxes, q, 4] with q 1 or num_classes and "
                       f"scores [batch, num_boxes, num_classes], got {list(boxes.shape)} and "
                       f"{list(scores.shape)}")
    per_class = _max_output(max_output_size_per_class)
    total = int(_scalar(max_total_size, "max_total_size"))
    if total <= 0:
        raise _invalid(f"max_total_size must be > 0, got {total}")
    threshold = _iou_threshold(iou_threshold)
    floor = float(_scalar(score_threshold, "score_threshold"))
    batch, _, q, _ = boxes.shape
    classes = scores.shape[2]
    size = _detections(per_class, classes, total, pad_per_class)
    out_boxes = np.zeros((batch, size, 4), np.float32)
    out_scores = np.zeros((batch, size), np.float32)
    out_classes = np.zeros((batch, size), np.float32)
    valid = np.zeros(batch, np.int32)
    for b in range(batch):
        picks = []  # (box index, class) per class in class order, each best first
        for c in range(classes):
            column = boxes[b, :, c if q > 1 else 0]
            chosen = _greedy(_BoxIoU(column), scores[b, :, c], per_class, threshold, floor)[0]
            picks.append(np.stack([chosen, np.full_like(chosen, c)], axis=1))
        picks = np.concatenate(picks)
        # stable: equal scores keep class order, then selection order
        order = np.argsort(-scores[b, picks[:, 0], picks[:, 1]], kind="stable")[:size]
        idx, cls = picks[order, 0], picks[order, 1]
        count = idx.size
        chosen_boxes = boxes[b, idx, cls if q > 1 else 0]
        if clip_boxes:
            chosen_boxes = np.clip(chosen_boxes, 0, 1)
        out_boxes[b, :count] = chosen_boxes
        out_scores[b, :count] = scores[b, idx, cls]
        out_classes[b, :count] = cls
        valid[b] = count
    return out_boxes, out_scores, out_classes, valid


# -- public wrappers ----------------------------------------------------------------------------

def _thresholds(boxes, iou_threshold, score_threshold):
    iou = convert_to_tensor(iou_threshold, dtype=boxes.dtype, name="iou_threshold")
    score = convert_to_tensor(score_threshold, dtype=boxes.dtype, name="score_threshold")
    return iou, score


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5,
                        score_threshold=float("-inf"), name=None):
    """Greedily selects boxes by descending score, dropping those overlapping a selected box.

    Args:
        boxes: float `[num_boxes, 4]` corners `[y1, x1, y2, x2]` (any corner order).
        scores: float `[num_boxes]`.
        max_output_size: int32 scalar, the most boxes to select.
        iou_threshold: boxes with IoU strictly above this with a selected box are dropped.
        score_threshold: only boxes scoring strictly above this are candidates.
        name: op name.

    Returns:
        int32 `[M]` indices into `boxes`, `M <= max_output_size`, best first.

    Raises:
        InvalidArgumentError: at run time, for bad shapes or an iou_threshold outside [0, 1].

    Example: `tf.gather(boxes, tf.image.non_max_suppression(boxes, scores, 10))`.
    """
    with scope(name, "non_max_suppression"):
        boxes = convert_to_tensor(boxes, name="boxes")
        iou, score = _thresholds(boxes, iou_threshold, score_threshold)
        return NonMaxSuppressionV3(boxes, scores, max_output_size, iou, score)


def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0,
                                    name=None):
    """Like `non_max_suppression`, also returning the selected (soft-NMS decayed) scores.

    With `soft_nms_sigma > 0` overlapping boxes are not dropped but their scores are multiplied
    by `exp(-iou^2 / (2 * soft_nms_sigma))` (Bodla et al.); a box is dropped once its score is
    at or below `score_threshold`.

    Returns:
        `(selected_indices int32 [M], selected_scores [M])`.
    """
    with scope(name, "non_max_suppression_with_scores"):
        boxes = convert_to_tensor(boxes, name="boxes")
        iou, score = _thresholds(boxes, iou_threshold, score_threshold)
        sigma = convert_to_tensor(soft_nms_sigma, dtype=boxes.dtype, name="soft_nms_sigma")
        out = NonMaxSuppressionV5(boxes, scores, max_output_size, iou, score, sigma)
        return out.selected_indices, out.selected_scores


def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5,
                               score_threshold=float("-inf"), pad_to_max_output_size=False,
                               name=None):
    """TF1's padded NMS (NonMaxSuppressionV4): `(selected_indices, valid_outputs)`.

    With `pad_to_max_output_size` the indices are zero-padded to `max_output_size` entries;
    `valid_outputs` counts the real ones.
    """
    with scope(name, "non_max_suppression_padded"):
        boxes = convert_to_tensor(boxes, name="boxes")
        iou, score = _thresholds(boxes, iou_threshold, score_threshold)
        out = NonMaxSuppressionV4(boxes, scores, max_output_size, iou, score,
                                  pad_to_max_output_size=pad_to_max_output_size)
        return out.selected_indices, out.valid_outputs


def non_max_suppression_overlaps(overlaps, scores, max_output_size, overlap_threshold=0.5,
                                 score_threshold=float("-inf"), name=None):
    """Greedy NMS over a precomputed `[num_boxes, num_boxes]` overlap matrix.

    A candidate `j` is dropped when `overlaps[j, i] > overlap_threshold` for a selected `i`.
    """
    with scope(name, "non_max_suppression_overlaps"):
        return NonMaxSuppressionWithOverlaps(overlaps, scores, max_output_size,
                                             overlap_threshold, score_threshold)


def combined_non_max_suppression(boxes, scores, max_output_size_per_class, max_total_size,
                                 iou_threshold=0.5, score_threshold=float("-inf"),
                                 pad_per_class=False, clip_boxes=True, name=None):
    """Per-class greedy NMS over a batch, merged across classes by score.

    Args:
        boxes: float32 `[batch, num_boxes, q, 4]`; `q` is 1 (boxes shared by all classes) or
            `num_classes`.
        scores: float32 `[batch, num_boxes, num_classes]`.
        max_output_size_per_class: the most boxes kept per class.
        max_total_size: the most boxes kept per image (> 0).
        iou_threshold, score_threshold: as in `non_max_suppression`.
        pad_per_class: pad to `min(max_output_size_per_class * num_classes, max_total_size)`
            detections instead of `max_total_size`.
        clip_boxes: clip the output boxes to [0, 1] (suppression uses the boxes as given).
        name: name scope.

    Returns:
        `(nmsed_boxes [batch, D, 4], nmsed_scores [batch, D], nmsed_classes [batch, D],
        valid_detections [batch])`, zero-padded past `valid_detections`.
    """
    with scope(name, "combined_non_max_suppression"):
        return CombinedNonMaxSuppression(boxes, scores, max_output_size_per_class,
                                         max_total_size, iou_threshold, score_threshold,
                                         pad_per_class=pad_per_class,
                                         clip_boxes=clip_boxes)
