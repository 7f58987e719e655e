"""Prefix beam search for CTCBeamSearchDecoder, vectorised over the batch (NumPy only).

TensorFlow's decoder visits the beams one by one and offers each one's extensions label by label
into a bounded top-N list; its result depends on that order. `beam_search` reproduces it with
one vectorised merge per (time step, beam rank) and a closed form for the label order.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors

_NEG_INF = -np.inf


def log_softmax(x: np.ndarray) -> np.ndarray:
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _child_ids(table, parents, labels, num_classes):
    """Canonical node ids of children (parent, label), created in `table` when new."""
    keys = parents * num_classes + labels
    pos = np.searchsorted(table["keys"], keys)
    found = pos < table["keys"].size
    found[found] = table["keys"][pos[found]] == keys[found]
    ids = np.empty(keys.size, np.int64)
    ids[found] = table["ids"][pos[found]]
    new = ~found
    first = table["parent"].size
    ids[new] = first + np.arange(int(new.sum()))
    table["parent"] = np.concatenate([table["parent"], parents[new]])
    table["label"] = np.concatenate([table["label"], labels[new]])
    table["depth"] = np.concatenate([table["depth"], table["depth"][parents[new]] + 1])
    all_keys = np.concatenate([table["keys"], keys[new]])
    order = np.argsort(all_keys, kind="stable")
    table["keys"] = all_keys[order]
    table["ids"] = np.concatenate([table["ids"], ids[new]])[order]
    return ids


def _revisit(raw, offered, leaf, visiting, parent, last, dead, width):
    """TensorFlow's label-by-label offers of one parent's extensions, in closed form.

    NOTE: TensorFlow offers a parent's extensions one label at a time, keeping the best
    `width`. A beam that earlier offers pushed out (in this pass) is offered afresh, with its
    parent's share of probability only; when refused it also loses its previous
    probabilities, so it extends nothing when its own turn comes. Returns the offered scores
    and the kept leaf scores.
    """
    grow = np.where(offered, raw, _NEG_INF)
    scores = leaf[5].copy()
    labels = np.arange(raw.shape[1])[None, :]
    b_idx, i_idx = np.nonzero((leaf[1] == visiting[:, None]) & (scores > _NEG_INF))
    if b_idx.size:
        s, c = scores[b_idx, i_idx], leaf[2][b_idx, i_idx]
        better = (scores[b_idx] > s[:, None]).sum(axis=1) + \
            ((grow[b_idx] > s[:, None]) & (labels < c[:, None])).sum(axis=1)
        out = better >= width
        scores[b_idx[out], i_idx[out]] = _NEG_INF
        grow[b_idx[out], c[out]] = raw[b_idx[out], c[out]]
    b_idx, j_idx = np.nonzero((parent == visiting[:, None]) & (parent >= 0) & ~dead)
    if b_idx.size:
        c = last[b_idx, j_idx]
        again = (scores[b_idx] > _NEG_INF) & (leaf[1][b_idx] == visiting[b_idx, None]) & \
            (leaf[2][b_idx] == c[:, None])
        gone = ~again.any(axis=1)
        b_idx, j_idx, c = b_idx[gone], j_idx[gone], c[gone]
        g = grow[b_idx, c]
        above = ((scores[b_idx] >= g[:, None]) & (scores[b_idx] > _NEG_INF)).sum(axis=1) + \
            ((grow[b_idx] >= g[:, None]) & (grow[b_idx] > _NEG_INF)
             & (labels < c[:, None])).sum(axis=1)
        refused = (g == _NEG_INF) | (above >= width)
        dead[b_idx[refused], j_idx[refused]] = True
    return grow, scores


def beam_search(inputs, seq, beam_width, top_paths, merge_repeated):
    """Prefix beam search over all batch entries at once, following TensorFlow's decoder.

    Each beam is a label prefix with the log probabilities of ending in a blank (`pb`) or in its
    last label (`pl`). A step first rescores the beams (own continuation plus, when the parent
    prefix is also a beam, its extension), then visits the beams best first and offers each
    one's extensions by every non-blank label that is not a beam already, keeping the
    `beam_width` best after each visit. NOTE: as in TensorFlow, a beam pushed out during this
    pass and then offered again by its parent comes back with its parent's share only.
    Prefixes are nodes of a trie with canonical ids, so a prefix that returns is recognised.

    Returns:
        paths [batch, top_paths, max_time] int64, lengths [batch, top_paths] and log
        probabilities [batch, top_paths].
    """
    max_time, batch, num_classes = inputs.shape
    blank = num_classes - 1
    width = beam_width
    rows = np.arange(batch)[:, None]
    table = {"parent": np.full(batch, -1, np.int64), "label": np.full(batch, -1, np.int64),
             "depth": np.zeros(batch, np.int64), "keys": np.zeros(0, np.int64),
             "ids": np.zeros(0, np.int64)}
    node = np.full((batch, width), -1, np.int64)
    node[:, 0] = np.arange(batch)
    parent = np.full((batch, width), -1, np.int64)
    pb = np.full((batch, width), _NEG_INF)
    pb[:, 0] = 0.0
    pl = np.full((batch, width), _NEG_INF)
    last = np.full((batch, width), -1, np.int64)
    labels = np.arange(num_classes)
    for t in range(max_time):
        active = (t < seq)[:, None]
        if not active.any():
            break
        lp = log_softmax(inputs[t])
        exists = node >= 0
        total = np.logaddexp(pb, pl)
        # Visit order: best beam first.
        rank = np.argsort(-total, axis=1, kind="stable")
        node, parent, pb, pl, last, total, exists = (
            np.take_along_axis(a, rank, axis=1)
            for a in (node, parent, pb, pl, last, total, exists))
        is_root = exists & (parent < 0)
        match = (node[:, None, :] == parent[:, :, None]) & exists[:, None, :] \
            & (parent[:, :, None] >= 0)
        has_parent = match.any(axis=2)
        pidx = match.argmax(axis=2)
        prev = np.where(last == last[rows, pidx], pb[rows, pidx], total[rows, pidx])
        label_lp = np.take_along_axis(lp, np.maximum(last, 0), axis=1)
        new_pl = np.where(is_root | ~exists, _NEG_INF,
                          np.logaddexp(pl, np.where(has_parent, prev, _NEG_INF)) + label_lp)
        new_pb = np.where(exists, total + lp[:, blank:blank + 1], _NEG_INF)
        leaf = [node.copy(), parent.copy(), last.copy(), new_pb, new_pl,
                np.logaddexp(new_pb, new_pl)]
        dead = ~exists
        for k in range(int(exists.sum(axis=1).max())):
            raw = lp + np.where(labels[None, :] == last[:, k:k + 1], pb[:, k:k + 1],
                                total[:, k:k + 1])
            taken = np.zeros((batch, num_classes), bool)
            b_idx, j_idx = np.nonzero((leaf[1] == node[:, k:k + 1]) & (leaf[5] > _NEG_INF)
                                      & exists[:, k:k + 1])
            taken[b_idx, leaf[2][b_idx, j_idx]] = True
            # A beam no better than the worst kept one offers nothing (as in TensorFlow).
            full = (leaf[5] > _NEG_INF).sum(axis=1) >= width
            beaten = ~exists[:, k] | (full & (total[:, k] <= leaf[5].min(axis=1)))
            if beaten.all():
                break  # later beams are no better and the worst kept one only rises
            skip = dead[:, k] | beaten
            offered = ~(taken | skip[:, None] | (labels == blank)[None, :])
            grow, kept = _revisit(raw, offered, leaf, np.where(skip, -2, node[:, k]), parent,
                                  last, dead, width)
            pool = np.concatenate([kept, grow], axis=1)
            order = np.argsort(-pool, axis=1, kind="stable")[:, :width]
            score = np.take_along_axis(pool, order, axis=1)
            alive = score > _NEG_INF
            is_new = order >= width
            src = np.minimum(order, width - 1)
            leaf = [np.where(alive & ~is_new, leaf[0][rows, src], -1),
                    np.where(is_new, node[:, k:k + 1], leaf[1][rows, src]),
                    np.where(is_new, order - width, leaf[2][rows, src]),
                    np.where(alive & ~is_new, leaf[3][rows, src], _NEG_INF),
                    np.where(alive, np.where(is_new, score, leaf[4][rows, src]), _NEG_INF),
                    score]
            leaf[1] = np.where(alive, leaf[1], -1)
        pending = (leaf[0] < 0) & (leaf[5] > _NEG_INF)
        leaf[0][pending] = _child_ids(table, leaf[1][pending], leaf[2][pending], num_classes)
        node = np.where(active, leaf[0], node)
        parent = np.where(active, leaf[1], parent)
        last = np.where(active, leaf[2], last)
        pb = np.where(active, leaf[3], pb)
        pl = np.where(active, leaf[4], pl)
    total = np.logaddexp(pb, pl)
    order = np.argsort(-total, axis=1, kind="stable")[:, :top_paths]
    best = np.take_along_axis(node, order, axis=1)
    log_probs = np.take_along_axis(total, order, axis=1)
    if (best < 0).any():
        b = int(np.flatnonzero((best < 0).any(axis=1))[0])
        raise errors.InvalidArgumentError(
            None, None, f"Less leaves in the beam search than requested. (batch {b} has "
                        f"{int((node[b] >= 0).sum())} paths, top_paths = {top_paths})")
    depth = table["depth"][best]
    paths = np.zeros((batch, top_paths, max(max_time, 1)), np.int64)
    cur = best
    for k in range(int(depth.max(initial=0))):
        pos = depth - 1 - k
        b_idx, p_idx = np.nonzero(pos >= 0)
        paths[b_idx, p_idx, pos[b_idx, p_idx]] = table["label"][cur[b_idx, p_idx]]
        cur = np.where(pos >= 0, table["parent"][np.maximum(cur, 0)], cur)
    keep = np.arange(paths.shape[2]) < depth[:, :, None]
    if merge_repeated:
        keep[:, :, 1:] &= paths[:, :, 1:] != paths[:, :, :-1]
    lengths = keep.sum(axis=2)
    compact = np.argsort(~keep, axis=2, kind="stable")
    return np.take_along_axis(paths, compact, axis=2), lengths, log_probs
