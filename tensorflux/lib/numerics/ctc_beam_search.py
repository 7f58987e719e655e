"""Prefix beam search for CTCBeamSearchDecoder, one sequence at a time, as TensorFlow's
decoder runs it.

Beams are nodes of a label trie, each with the log probabilities of its prefix ending in a
blank (`b`), in its last label (`l`) and in either (`t`), for the previous step (`old`) and
this one (`new`). A step takes the kept beams best first (a stable sort), rescores each (its own
continuation, plus its parent's extension when the parent is still a beam), then offers each
beam's extensions label by label into a bounded list of `beam_width` leaves: an extension
enters when the list has room or it beats the worst leaf, which then leaves the list and loses
its scores. The result depends on that order, so the loops are written as TensorFlow's are.

`decode_sequence` is plain Python over arrays; `_decode_sequence_jit` is the same function
compiled with numba, used when `jit.available()` (tests compare the two).
"""

from __future__ import annotations

import math

import numpy as np

from tensorflux.framework import errors
from tensorflux.lib.numerics import jit

__all__ = ["beam_search", "decode_sequence", "log_softmax"]

# Node table columns.
_PARENT, _LABEL, _BLOCK = 0, 1, 2
_OLD_T, _OLD_B, _OLD_L, _NEW_T, _NEW_B, _NEW_L = 0, 1, 2, 3, 4, 5
_LOG2 = math.log(2.0)


def log_softmax(x: np.ndarray) -> np.ndarray:
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def decode_sequence(log_probs, width):
    """Beam search over one sequence's log probabilities [time, classes] (blank last).

    Returns:
        (links [nodes, 3] of parent/label/child block, scores [nodes, 6], leaves): the trie
        and the final leaves, best first.
    """
    num_classes = log_probs.shape[1]
    blank = num_classes - 1
    capacity = 64
    links = np.full((capacity, 3), -1, np.int64)
    scores = np.full((capacity, 6), -np.inf)
    blocks = np.full((16, max(blank, 1)), -1, np.int64)
    count_nodes, count_blocks = 1, 0
    scores[0, _NEW_T] = 0.0
    scores[0, _NEW_B] = 0.0
    leaves = np.zeros(width + 1, np.int64)
    branches = np.zeros(width + 1, np.int64)
    count = 1
    for t in range(log_probs.shape[0]):
        row = log_probs[t]
        keys = np.empty(count)
        for i in range(count):
            keys[i] = -scores[leaves[i], _NEW_T]
        order = np.argsort(keys, kind="mergesort")
        n_branches = count
        for i in range(n_branches):
            branches[i] = leaves[order[i]]
        for i in range(n_branches):
            b = branches[i]
            scores[b, _OLD_T] = scores[b, _NEW_T]
            scores[b, _OLD_B] = scores[b, _NEW_B]
            scores[b, _OLD_L] = scores[b, _NEW_L]
        count = 0
        for i in range(n_branches):
            b = branches[i]
            p = links[b, _PARENT]
            if p >= 0:
                if scores[p, _NEW_T] > -np.inf:
                    if links[b, _LABEL] == links[p, _LABEL]:
                        prev = scores[p, _OLD_B]
                    else:
                        prev = scores[p, _OLD_T]
                    x, y = scores[b, _NEW_L], prev
                    if x == y:  # np.logaddexp, as NumPy computes it
                        scores[b, _NEW_L] = x + _LOG2
                    elif x > y:
                        scores[b, _NEW_L] = x + math.log1p(math.exp(y - x))
                    else:
                        scores[b, _NEW_L] = y + math.log1p(math.exp(x - y))
                scores[b, _NEW_L] += row[links[b, _LABEL]]
            scores[b, _NEW_B] = scores[b, _OLD_T] + row[blank]
            x, y = scores[b, _NEW_B], scores[b, _NEW_L]
            if x == y:
                scores[b, _NEW_T] = x + _LOG2
            elif x > y:
                scores[b, _NEW_T] = x + math.log1p(math.exp(y - x))
            else:
                scores[b, _NEW_T] = y + math.log1p(math.exp(x - y))
            leaves[count] = b
            count += 1
        for i in range(n_branches):
            b = branches[i]
            # A beam extends only if it could enter the list itself.
            if not scores[b, _OLD_T] > -np.inf:
                continue
            if count >= width:
                worst = 0
                for j in range(1, count):
                    if scores[leaves[j], _NEW_T] < scores[leaves[worst], _NEW_T]:
                        worst = j
                if not scores[b, _OLD_T] > scores[leaves[worst], _NEW_T]:
                    continue
            for c in range(blank):
                block = links[b, _BLOCK]
                if block < 0:
                    if count_blocks == blocks.shape[0]:
                        grown = np.full((2 * blocks.shape[0], blocks.shape[1]), -1, np.int64)
                        grown[:count_blocks] = blocks
                        blocks = grown
                    block = count_blocks
                    count_blocks += 1
                    links[b, _BLOCK] = block
                child = blocks[block, c]
                if child < 0:
                    if count_nodes == links.shape[0]:
                        more_links = np.full((2 * capacity, 3), -1, np.int64)
                        more_links[:capacity] = links
                        more_scores = np.full((2 * capacity, 6), -np.inf)
                        more_scores[:capacity] = scores
                        links, scores, capacity = more_links, more_scores, 2 * capacity
                    child = count_nodes
                    count_nodes += 1
                    links[child, _PARENT] = b
                    links[child, _LABEL] = c
                    blocks[block, c] = child
                if scores[child, _NEW_T] > -np.inf:
                    continue  # already a leaf this step
                prev = scores[b, _OLD_B] if c == links[b, _LABEL] else scores[b, _OLD_T]
                value = row[c] + prev
                scores[child, _NEW_T] = value
                scores[child, _NEW_B] = -np.inf
                scores[child, _NEW_L] = value
                admit = value > -np.inf
                worst = 0  # the first lowest-scored leaf, needed when the list is full
                if admit and count >= width:
                    for j in range(1, count):
                        if scores[leaves[j], _NEW_T] < scores[leaves[worst], _NEW_T]:
                            worst = j
                    admit = value > scores[leaves[worst], _NEW_T]
                if admit:
                    if count == width:
                        bottom = leaves[worst]
                        scores[bottom, _NEW_T] = -np.inf
                        scores[bottom, _NEW_B] = -np.inf
                        scores[bottom, _NEW_L] = -np.inf
                        for j in range(worst, count - 1):
                            leaves[j] = leaves[j + 1]
                        count -= 1
                    leaves[count] = child
                    count += 1
                else:
                    for k in range(6):
                        scores[child, k] = -np.inf
    final = np.empty(count)
    for i in range(count):
        final[i] = -scores[leaves[i], _NEW_T]
    ranked = leaves[:count][np.argsort(final, kind="mergesort")]
    return links[:count_nodes], scores[:count_nodes], ranked


_decode_sequence_jit = jit.jit(decode_sequence)


def beam_search(inputs, seq, beam_width, top_paths, merge_repeated):
    """Decodes every sequence of the batch (`inputs` [time, batch, classes] logits).

    Returns:
        paths [batch, top_paths, max_time] int64, lengths [batch, top_paths] and log
        probabilities [batch, top_paths].

    Raises:
        InvalidArgumentError: a sequence has fewer leaves than `top_paths`.
    """
    max_time, batch, _ = inputs.shape
    decode = _decode_sequence_jit if jit.available() else decode_sequence
    paths = np.zeros((batch, top_paths, max(max_time, 1)), np.int64)
    lengths = np.zeros((batch, top_paths), np.int64)
    log_probs = np.zeros((batch, top_paths))
    for b in range(batch):
        steps = int(seq[b])
        log_p = np.ascontiguousarray(log_softmax(inputs[:steps, b]), dtype=np.float64)
        links, scores, ranked = decode(log_p, beam_width)
        if ranked.size < top_paths:
            raise errors.InvalidArgumentError(
                None, None, f"Less leaves in the beam search than requested. (batch {b} has "
                            f"{ranked.size} paths, top_paths = {top_paths})")
        for p in range(top_paths):
            node = int(ranked[p])
            log_probs[b, p] = scores[node, _NEW_T]
            labels = []
            while links[node, _PARENT] >= 0:
                labels.append(int(links[node, _LABEL]))
                node = int(links[node, _PARENT])
            labels.reverse()
            if merge_repeated:
                labels = [v for i, v in enumerate(labels) if i == 0 or v != labels[i - 1]]
            paths[b, p, :len(labels)] = labels
            lengths[b, p] = len(labels)
    return paths, lengths, log_probs
