"""The floor of a training step: the raw NumPy/OpenBLAS calls the MLP or LSTM step needs, next
to PyTorch's per-op CPU (torch.profiler) and the whole step's CPU and wall time of tensorflux,
TensorFlow and PyTorch, interleaved in one process.

    cd <worktree> && PYTHONPATH=$PWD TF_CPP_MIN_LOG_LEVEL=3 TF_USE_LEGACY_KERAS=1 \
        /opt/tfref/bin/python bench/step_floor.py --model mlp [--threads 1] [--rounds 10]

`--threads 1` (the default) gives every framework one BLAS / intra-op / inter-op thread (set
before NumPy loads), so CPU times compare per-core work, which other processes' load changes
far less than wall time. Floor rows are the minimum thread CPU over repeats of one NumPy call
(on the step's shapes, with the step's operand layouts: a transposed operand is a view);
PyTorch rows are the same products through torch (MKL). tensorflux's own per-op table is
`bench/step_breakdown.py --one-thread`.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import time

if "--threads" not in sys.argv or sys.argv[sys.argv.index("--threads") + 1] == "1":
    os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before NumPy loads OpenBLAS
    os.environ["NUMBA_NUM_THREADS"] = "1"
    os.environ["OMP_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import training  # noqa: E402  (bench/training.py: the models)


def _cpu_min(fn, repeats: int = 9) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.thread_time()
        fn()
        times.append(time.thread_time() - start)
    return min(times) * 1e3


def _mlp_calls(np_or_torch, rng):
    """(name, numpy call, torch call) for each kernel of the MLP step (batch 128)."""
    f = np.float32
    a = {k: rng.rand(*s).astype(f) for k, s in dict(
        x=(128, 784), w1=(784, 1024), w2=(1024, 1024), w3=(1024, 10), b=(1024,),
        h=(128, 1024), g=(128, 1024), g3=(128, 10)).items()}
    t = {k: np_or_torch.from_numpy(v) for k, v in a.items()}
    lr = f(0.01)

    def relu_grad(g, h):
        return np.where(h > 0, g, f(0))

    return [
        ("fwd dense   x@W1 + b, relu", lambda: np.maximum(a["x"] @ a["w1"] + a["b"], 0),
         lambda: np_or_torch.relu(np_or_torch.addmm(t["b"], t["x"], t["w1"]))),
        ("fwd dense_1 h@W2 + b, relu", lambda: np.maximum(a["h"] @ a["w2"] + a["b"], 0),
         lambda: np_or_torch.relu(np_or_torch.addmm(t["b"], t["h"], t["w2"]))),
        ("fwd dense_2 h@W3", lambda: a["h"] @ a["w3"], lambda: t["h"] @ t["w3"]),
        ("bwd dense_2 dW3, dh", lambda: (a["h"].T @ a["g3"], a["g3"] @ a["w3"].T),
         lambda: (t["h"].t() @ t["g3"], t["g3"] @ t["w3"].t())),
        ("bwd dense_1 dW2 = h.T@g", lambda: a["h"].T @ a["g"], lambda: t["h"].t() @ t["g"]),
        ("bwd dense_1 dh = g@W2.T", lambda: a["g"] @ a["w2"].T, lambda: t["g"] @ t["w2"].t()),
        ("bwd dense   dW1 = x.T@g", lambda: a["x"].T @ a["g"], lambda: t["x"].t() @ t["g"]),
        ("bwd relu grads (2) + bias grads (3)",
         lambda: (relu_grad(a["g"], a["h"]), relu_grad(a["g"], a["h"]), a["g"].sum(0),
                  a["g"].sum(0)),
         lambda: (np_or_torch.ops.aten.threshold_backward(t["g"], t["h"], 0),
                  np_or_torch.ops.aten.threshold_backward(t["g"], t["h"], 0), t["g"].sum(0),
                  t["g"].sum(0))),
        ("sgd W1, W2 (w -= lr * g)",
         lambda: (a["w2"].__isub__(lr * a["w2"]), a["w1"].__isub__(lr * a["w1"])),
         lambda: (t["w2"].add_(t["w2"], alpha=-0.01), t["w1"].add_(t["w1"], alpha=-0.01))),
    ]


def _lstm_calls(np_or_torch, rng):
    """(name, numpy call, torch call) for the heavy kernels of the LSTM LM step."""
    f = np.float32
    a = {k: rng.rand(*s).astype(f) for k, s in dict(
        o=(640, 256), w=(256, 10000), g=(640, 10000), xh=(32, 512), k=(512, 1024),
        gg=(32, 1024), xhc=(640, 512), ggc=(640, 1024)).items()}
    t = {k: np_or_torch.from_numpy(v) for k, v in a.items()}
    labels = rng.randint(0, 10000, 640)
    t_labels = np_or_torch.from_numpy(labels)
    rows = np.arange(640)

    def xent():
        shifted = a["g"] - a["g"].max(1, keepdims=True)
        e = np.exp(shifted)
        e /= e.sum(1, keepdims=True)
        e[rows, labels] -= 1

    def t_xent():
        logits = t["g"].detach().requires_grad_()
        np_or_torch.nn.functional.cross_entropy(logits, t_labels).backward()

    return [
        ("fwd logits o@W [640,256]x[256,10000]", lambda: a["o"] @ a["w"], lambda: t["o"] @ t["w"]),
        ("bwd dW = o.T@g", lambda: a["o"].T @ a["g"], lambda: t["o"].t() @ t["g"]),
        ("bwd do = g@W.T", lambda: a["g"] @ a["w"].T, lambda: t["g"] @ t["w"].t()),
        ("softmax xent fwd+bwd [640,10000]", xent, t_xent),
        ("fwd gates x20 [32,512]x[512,1024]", lambda: [a["xh"] @ a["k"] for _ in range(20)],
         lambda: [t["xh"] @ t["k"] for _ in range(20)]),
        ("bwd gates dxh x20 g@K.T", lambda: [a["gg"] @ a["k"].T for _ in range(20)],
         lambda: [t["gg"] @ t["k"].t() for _ in range(20)]),
        ("bwd gates dK merged [512,640]x[640,1024]", lambda: a["xhc"].T @ a["ggc"],
         lambda: t["xhc"].t() @ t["ggc"]),
    ]


def floor_table(torch, model: str) -> None:
    rng = np.random.RandomState(0)
    calls = (_mlp_calls if model == "mlp" else _lstm_calls)(torch, rng)
    print(f"{'kernel (thread CPU, min ms)':<44}{'NumPy':>9}{'PyTorch':>9}")
    totals = [0.0, 0.0]
    for name, numpy_call, torch_call in calls:
        with torch.no_grad() if "xent" not in name else _null():
            row = [_cpu_min(numpy_call), _cpu_min(torch_call)]
        totals = [s + r for s, r in zip(totals, row)]
        print(f"{name:<44}{row[0]:>9.2f}{row[1]:>9.2f}")
    print(f"{'sum':<44}{totals[0]:>9.2f}{totals[1]:>9.2f}")


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def torch_profile(torch, model: str, steps: int = 5) -> None:
    """PyTorch's per-op self CPU (ms per step) from torch.profiler."""
    step = _torch_step(torch, model)
    for _ in range(3):
        step()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
    rows = collections.Counter()
    for event in prof.key_averages():
        rows[event.key] += event.self_cpu_time_total / 1e3 / steps
    print(f"{'PyTorch op (self CPU ms/step)':<44}{'ms':>9}")
    for key, ms in rows.most_common(14):
        print(f"{key:<44}{ms:>9.2f}")
    print(f"{'sum':<44}{sum(rows.values()):>9.2f}")


def _torch_step(torch, model: str):
    captured = {}
    original = training._median_step

    def grab(run, steps, warmup=3):
        captured["run"] = run
        return 0.0, 0.0

    training._median_step = grab
    try:
        training.torch_framework(torch, model, 1)
    finally:
        training._median_step = original
    return captured["run"]


def _graph_step(tf, model: str, one_thread: bool):
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        train, feed, *_ = training.GRAPHS[model](tf)
        init = tf.global_variables_initializer()
    config = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1) \
        if one_thread else None
    sess = tf.Session(graph=graph, config=config)
    sess.run(init)
    return lambda: sess.run(train, feed)


def step_table(torch, model: str, rounds: int, one_thread: bool) -> None:
    import tensorflux

    steps = {"tensorflux": _graph_step(tensorflux, model, one_thread),
             "tensorflow": _graph_step(training._tf_compat_v1(), model, one_thread),
             "pytorch": _torch_step(torch, model)}
    cpu: dict = {k: [] for k in steps}
    wall: dict = {k: [] for k in steps}
    for run in steps.values():
        for _ in range(3):
            run()
    print(f"# {training.machine_load()}")
    for _ in range(rounds):
        for name, run in steps.items():
            c0, w0 = time.process_time(), time.perf_counter()
            run()
            cpu[name].append(time.process_time() - c0)
            wall[name].append(time.perf_counter() - w0)
    print(f"# after: {training.machine_load()}")
    print(f"{'step (ms)':<14}{'wall med':>10}{'wall min':>10}{'cpu med':>10}{'cpu min':>10}")
    for name in steps:
        print(f"{name:<14}{statistics.median(wall[name]) * 1e3:>10.1f}"
              f"{min(wall[name]) * 1e3:>10.1f}{statistics.median(cpu[name]) * 1e3:>10.1f}"
              f"{min(cpu[name]) * 1e3:>10.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("mlp", "lstm"), default="mlp")
    parser.add_argument("--threads", type=int, choices=(1, 2), default=1)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--skip", default="", help="comma list of: floor,profile,step")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    skip = set(filter(None, args.skip.split(",")))
    if "floor" not in skip:
        floor_table(torch, args.model)
    if "profile" not in skip:
        torch_profile(torch, args.model)
    if "step" not in skip:
        step_table(torch, args.model, args.rounds, args.threads == 1)


if __name__ == "__main__":
    main()
