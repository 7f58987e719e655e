"""Seq2seq with attention and beam search, in the style of TF1's NMT tutorial: learn to
reverse short digit sequences.

Training: a GRU encoder over the source digits, a decoder cell wrapped in an AttentionWrapper
(Bahdanau attention over the encoder outputs, masked past each source length), fed by a
TrainingHelper (teacher forcing) through BasicDecoder + dynamic_decode, with
seq2seq.sequence_loss masked past each target's EOS. Inference is a separate graph, as in the
NMT tutorial: the same model restored from the checkpoint, decoding with a BeamSearchDecoder
over `tile_batch`-ed memory, and scored by exact match of the best beam.

    python examples/seq2seq_attention.py --steps 200
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

import tensorflux as tf
from tensorflux.contrib import seq2seq  # tf.contrib.seq2seq

PAD, GO, EOS = 0, 1, 2
VOCAB = 13  # PAD, GO, EOS and the digits 0-9 (token = digit + 3)


def make_batch(rng, batch_size, min_len, max_len):
    """Source digits (padded), their lengths, and the reversed targets ending in EOS."""
    lengths = rng.randint(min_len, max_len + 1, batch_size)
    source = np.full((batch_size, max_len), PAD, np.int32)
    target = np.full((batch_size, max_len + 1), PAD, np.int32)
    for i, n in enumerate(lengths):
        digits = rng.randint(0, 10, n) + 3
        source[i, :n] = digits
        target[i, :n] = digits[::-1]
        target[i, n] = EOS
    return source, lengths.astype(np.int32), target, (lengths + 1).astype(np.int32)


def encoder(source, source_lengths, units):
    embedding = tf.get_variable("embedding", [VOCAB, units])
    cell = tf.nn.rnn_cell.GRUCell(units)
    outputs, state = tf.nn.dynamic_rnn(cell, tf.nn.embedding_lookup(embedding, source),
                                       sequence_length=source_lengths, dtype=tf.float32,
                                       scope="encoder")
    return embedding, outputs, state


def attention_cell(memory, memory_lengths, units):
    mechanism = seq2seq.BahdanauAttention(units, memory, memory_sequence_length=memory_lengths)
    return seq2seq.AttentionWrapper(tf.nn.rnn_cell.GRUCell(units), mechanism,
                                    attention_layer_size=units)


def build_train(args):
    source = tf.placeholder(tf.int32, [None, None], name="source")
    source_lengths = tf.placeholder(tf.int32, [None], name="source_lengths")
    target = tf.placeholder(tf.int32, [None, None], name="target")
    target_lengths = tf.placeholder(tf.int32, [None], name="target_lengths")
    embedding, memory, state = encoder(source, source_lengths, args.units)
    batch = tf.shape(source)[0]
    decoder_inputs = tf.concat([tf.fill([batch, 1], GO), target[:, :-1]], 1)
    cell = attention_cell(memory, source_lengths, args.units)
    helper = seq2seq.TrainingHelper(tf.nn.embedding_lookup(embedding, decoder_inputs),
                                    target_lengths)
    decoder = seq2seq.BasicDecoder(cell, helper,
                                   cell.zero_state(batch, tf.float32).clone(cell_state=state),
                                   output_layer=tf.layers.Dense(VOCAB, name="output_projection"))
    outputs, _, _ = seq2seq.dynamic_decode(decoder, scope="decoder")
    logits = outputs.rnn_output
    weights = tf.sequence_mask(target_lengths, tf.shape(logits)[1], dtype=tf.float32)
    loss = seq2seq.sequence_loss(logits, target[:, :tf.shape(logits)[1]], weights)
    step = tf.train.get_or_create_global_step()
    optimizer = tf.train.AdamOptimizer(args.learning_rate)
    grads, variables = zip(*optimizer.compute_gradients(loss))
    grads, _ = tf.clip_by_global_norm(grads, 5.0)
    train_op = optimizer.apply_gradients(zip(grads, variables), global_step=step)
    return dict(source=source, source_lengths=source_lengths, target=target,
                target_lengths=target_lengths, loss=loss, train_op=train_op)


def build_infer(args):
    source = tf.placeholder(tf.int32, [None, None], name="source")
    source_lengths = tf.placeholder(tf.int32, [None], name="source_lengths")
    embedding, memory, state = encoder(source, source_lengths, args.units)
    batch = tf.shape(source)[0]
    beam = args.beam_width
    cell = attention_cell(seq2seq.tile_batch(memory, beam),
                          seq2seq.tile_batch(source_lengths, beam), args.units)
    initial = cell.zero_state(batch * beam, tf.float32).clone(
        cell_state=seq2seq.tile_batch(state, beam))
    decoder = seq2seq.BeamSearchDecoder(
        cell, embedding, tf.fill([batch], GO), EOS, initial, beam,
        output_layer=tf.layers.Dense(VOCAB, name="output_projection"),
        length_penalty_weight=0.0)
    outputs, _, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=args.max_len + 2,
                                           scope="decoder")
    return dict(source=source, source_lengths=source_lengths,
                best=outputs.predicted_ids[:, :, 0])


def exact_match(best, target, target_lengths):
    hits = 0
    for row, want, n in zip(best, target, target_lengths):
        got = list(row[:n])
        hits += got == list(want[:n])
    return hits / len(target)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--units", type=int, default=48)
    parser.add_argument("--min_len", type=int, default=2)
    parser.add_argument("--max_len", type=int, default=5)
    parser.add_argument("--beam_width", type=int, default=3)
    parser.add_argument("--learning_rate", type=float, default=0.01)
    parser.add_argument("--eval_size", type=int, default=200)
    parser.add_argument("--model_dir", default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="seq2seq_attention_")
    rng = np.random.RandomState(args.seed)
    start = time.time()

    train_graph = tf.Graph()
    with train_graph.as_default():
        tf.set_random_seed(args.seed)
        model = build_train(args)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = []
            for step in range(1, args.steps + 1):
                src, src_len, tgt, tgt_len = make_batch(rng, args.batch_size, args.min_len,
                                                        args.max_len)
                loss, _ = sess.run([model["loss"], model["train_op"]], {
                    model["source"]: src, model["source_lengths"]: src_len,
                    model["target"]: tgt, model["target_lengths"]: tgt_len})
                losses.append(float(loss))
                if step % 100 == 0 or step == 1:
                    print(f"step {step:4d}  loss {np.mean(losses[-100:]):.3f}  "
                          f"({time.time() - start:.0f} s)")
            checkpoint = saver.save(sess, os.path.join(model_dir, "model.ckpt"),
                                    global_step=args.steps)

    infer_graph = tf.Graph()
    with infer_graph.as_default():
        model = build_infer(args)
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, checkpoint)
            src, src_len, tgt, tgt_len = make_batch(np.random.RandomState(args.seed + 1),
                                                    args.eval_size, args.min_len, args.max_len)
            best = sess.run(model["best"], {model["source"]: src,
                                            model["source_lengths"]: src_len})
    accuracy = exact_match(best, tgt, tgt_len)
    digits = [int(t) - 3 for t in src[0, :src_len[0]]]
    answer = [int(t) - 3 for t in best[0] if t > EOS]
    print(f"example: {digits} -> {answer}")
    print(f"beam-search exact-match accuracy on {args.eval_size} new sequences: {accuracy:.3f} "
          f"({time.time() - start:.0f} s)")
    result = dict(losses=losses, accuracy=accuracy, checkpoint=checkpoint, predictions=best,
                  source=src, source_lengths=src_len)
    if argv is None:
        assert accuracy > 0.9, f"the model did not learn to reverse sequences: {accuracy:.3f}"
        print("OK")
    return result


if __name__ == "__main__":
    main()
