"""Kills processes saving checkpoints at random moments, then checks what they left.

Run as `python kill_saves.py DIRECTORY MODE KILLS SEED` (MODE: `steps` saves
`model.ckpt-<k>` with max_to_keep=3, `same` saves over one prefix). The process imports
tensorflux once and forks one saver child per round (a fresh import per kill would take
seconds); the child restores the latest checkpoint with `Saver.restore` (exiting with code 3
if it cannot), checks that both variables hold the step it expects, then saves in a loop
(both variables set to the step number before each save) until it is SIGKILLed at a random
moment after its first save of the round (within about two save durations). After each
kill this process inspects the directory without a session. A final child saves once and
exits; then no temporary file may be left. Prints one JSON summary line.
"""

import json
import os
import random
import signal
import sys
import time

import numpy as np

import tensorflux as tf
from tensorflux.lib.formats import atomic_files, bundle
from tensorflux.protos import meta_graph_pb2
from tensorflux.train import checkpoint_utils

SIZE = 1 << 17  # float32 elements per variable: each save writes 1 MB


def child(directory: str, mode: str, ready_fd: int, once: bool) -> None:
    prefix = os.path.join(directory, "model.ckpt")
    with tf.Graph().as_default():
        a = tf.Variable(np.zeros(SIZE, np.float32), name="a")
        b = tf.Variable(np.zeros(SIZE, np.float32), name="b")
        step = tf.placeholder(tf.float32, [])
        assign = tf.group(a.assign(tf.fill([SIZE], step)), b.assign(tf.fill([SIZE], step)))
        saver = tf.train.Saver(max_to_keep=3)
        with tf.Session() as sess:
            latest = tf.train.latest_checkpoint(directory)
            k = 1
            if latest is not None:
                try:
                    saver.restore(sess, latest)
                    va, vb = sess.run([a, b])
                except tf.errors.OpError as err:
                    print(f"restore of {latest} failed: {err}", file=sys.stderr, flush=True)
                    os._exit(3)
                if not (np.all(va == va[0]) and np.array_equal(va, vb)):
                    print(f"{latest} restored inconsistent values", file=sys.stderr, flush=True)
                    os._exit(4)
                k = int(va[0]) + 1
                # As a restarted trainer does: the kept checkpoints are deleted in turn.
                saver.recover_last_checkpoints(
                    list(tf.train.get_checkpoint_state(directory).all_model_checkpoint_paths))
            os.write(ready_fd, b"r")
            while True:
                sess.run(assign, {step: k})
                if mode == "steps":
                    saver.save(sess, prefix, global_step=k)
                else:
                    saver.save(sess, prefix)
                k += 1
                if once:
                    os._exit(0)
                os.write(ready_fd, b"s")


def inspect(directory: str, mode: str, counts: dict, last: list) -> None:
    """Counts lost checkpoints, inconsistent values and missing or truncated .meta files."""
    latest = checkpoint_utils.latest_checkpoint(directory)
    if latest is None:
        counts["lost"] += 1
        return
    state = checkpoint_utils.get_checkpoint_state(directory)
    for path in sorted(set(state.all_model_checkpoint_paths) | {latest}):
        try:
            with bundle.BundleReader(path) as reader:
                va, vb = reader.get_tensor("a"), reader.get_tensor("b")
        except tf.errors.OpError:
            counts["lost" if path == latest else "unreadable_listed"] += 1
            continue
        step = va[0]
        if not (np.all(va == step) and np.array_equal(va, vb)) or \
                (mode == "steps" and step != int(path.rsplit("-", 1)[1])):
            counts["inconsistent"] += 1
        if path == latest:
            if step < last[0]:
                counts["went_back"] += 1
            last[0] = step
        meta_path = checkpoint_utils.meta_graph_filename(path)
        if not os.path.exists(meta_path):
            counts["meta_missing"] += 1
            continue
        meta = meta_graph_pb2.MetaGraphDef()
        try:
            with open(meta_path, "rb") as handle:
                meta.ParseFromString(handle.read())
            complete = meta.saver_def.restore_op_name and len(meta.graph_def.node) > 5
        except Exception:  # noqa: BLE001 - any parse failure counts
            complete = False
        if not complete:
            counts["meta_truncated"] += 1


def run_child(directory, mode, once):
    """Forks a saver child; returns (pid, whether it restored, seconds its first save took,
    the read end of its pipe: one byte per save)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            child(directory, mode, write_fd, once)
        finally:
            os._exit(1)
    os.close(write_fd)
    ready = os.read(read_fd, 1) == b"r"
    started = time.monotonic()
    saved = ready and not once and os.read(read_fd, 1) == b"s"
    return pid, ready, time.monotonic() - started if saved else 0.0, read_fd


def main() -> None:
    directory, mode, kills, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed)
    counts = dict(kills=0, lost=0, unreadable_listed=0, inconsistent=0, went_back=0,
                  meta_missing=0, meta_truncated=0, restore_failed=0, temporaries_after=0)
    last = [0.0]
    # Round 0 runs until a first checkpoint exists; the kills start from there.
    pid, ready, _, pipe = run_child(directory, mode, once=True)
    os.waitpid(pid, 0)
    os.close(pipe)
    for _ in range(kills):
        pid, ready, save_secs, pipe = run_child(directory, mode, once=False)
        if not ready:  # the child could not restore the latest checkpoint
            counts["restore_failed"] += 1
            os.waitpid(pid, 0)
            os.close(pipe)
            continue
        # The child saves back to back: a moment within the next two saves is, most of the
        # time, in the middle of one (writing data, index, .meta or the state file).
        time.sleep(rng.uniform(0.0, 2.0 * save_secs))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(pipe)
        counts["kills"] += 1
        inspect(directory, mode, counts, last)
    pid, ready, _, pipe = run_child(directory, mode, once=True)
    _, status = os.waitpid(pid, 0)
    os.close(pipe)
    if not ready or status != 0:
        counts["restore_failed"] += 1
    inspect(directory, mode, counts, last)
    counts["temporaries_after"] = sum(atomic_files.MARK in n for n in os.listdir(directory))
    counts["last_step"] = float(last[0])
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    main()
