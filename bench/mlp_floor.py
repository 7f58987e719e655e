"""The MLP step's floor on two cores: each product of one 784-1024-1024-10 b128 SGD step in
NumPy/OpenBLAS and in torch (MKL/oneDNN), with 1 and 2 threads, its elementwise passes, and the
whole step of tensorflux, TensorFlow and PyTorch, all interleaved round by round in one process
(wall min / median and process CPU median per call; thread counts switched per call).

    cd <worktree> && PYTHONPATH=$PWD TF_CPP_MIN_LOG_LEVEL=3 TF_USE_LEGACY_KERAS=1 \
        /opt/tfref/bin/python bench/mlp_floor.py [--rounds 30] [--skip step]

Rows: `np1`/`np2` = NumPy with OpenBLAS on 1/2 threads (threadpoolctl), `t1`/`t2` = torch.mm
with torch.set_num_threads(1/2). The products use the step's operand layouts (a transposed
operand is a view). The step rows run each framework's step with its default threads.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
import threadpoolctl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import step_floor  # noqa: E402
import training  # noqa: E402


def _arrays(rng):
    f = np.float32
    shapes = dict(x=(128, 784), w1=(784, 1024), w2=(1024, 1024), w3=(1024, 10), b=(1024,),
                  h1=(128, 1024), h2=(128, 1024), g1=(128, 1024), g2=(128, 1024), g3=(128, 10),
                  o1=(784, 1024), o2=(1024, 1024))
    return {k: (rng.rand(*s).astype(f) - f(0.5)) for k, s in shapes.items()}


def product_rows(torch, a):
    """(name, flops, numpy call, torch call): the step's products."""
    t = {k: torch.from_numpy(v) for k, v in a.items()}
    mm = torch.mm
    return [
        ("x@W1 [128,784]x[784,1024]", 2 * 128 * 784 * 1024,
         lambda: np.matmul(a["x"], a["w1"]), lambda: mm(t["x"], t["w1"])),
        ("h1@W2 [128,1024]x[1024,1024]", 2 * 128 * 1024 * 1024,
         lambda: np.matmul(a["h1"], a["w2"]), lambda: mm(t["h1"], t["w2"])),
        ("dW2 = h1.T@g2", 2 * 128 * 1024 * 1024,
         lambda: np.matmul(a["h1"].T, a["g2"]), lambda: mm(t["h1"].t(), t["g2"])),
        ("dh1 = g2@W2.T", 2 * 128 * 1024 * 1024,
         lambda: np.matmul(a["g2"], a["w2"].T), lambda: mm(t["g2"], t["w2"].t())),
        ("dW1 = x.T@g1", 2 * 128 * 784 * 1024,
         lambda: np.matmul(a["x"].T, a["g1"]), lambda: mm(t["x"].t(), t["g1"])),
        ("small: h2@W3, dW3, g3@W3.T", 3 * 2 * 128 * 1024 * 10,
         lambda: (a["h2"] @ a["w3"], a["h2"].T @ a["g3"], a["g3"] @ a["w3"].T),
         lambda: (t["h2"] @ t["w3"], t["h2"].t() @ t["g3"], t["g3"] @ t["w3"].t())),
    ]


def pass_rows(torch, a):
    """(name, numpy call, torch call): the step's elementwise passes."""
    t = {k: torch.from_numpy(v) for k, v in a.items()}
    f = np.float32
    lr = f(0.01)
    h = a["h1"]

    def np_relu_grads():
        np.where(a["h1"] > 0, a["g1"], f(0))
        np.where(a["h2"] > 0, a["g2"], f(0))

    def np_sgd():
        a["o1"] -= lr * a["w1"]  # the update's result is in o1/o2, a fresh gradient each round
        a["o2"] -= lr * a["w2"]

    return [
        ("bias+relu x2 [128,1024]", lambda: (np.maximum(h + a["b"], 0),
                                            np.maximum(h + a["b"], 0)),
         lambda: (torch.relu(t["h1"] + t["b"]), torch.relu(t["h1"] + t["b"]))),
        ("relu grads x2", np_relu_grads,
         lambda: (torch.ops.aten.threshold_backward(t["g1"], t["h1"], 0),
                  torch.ops.aten.threshold_backward(t["g2"], t["h2"], 0))),
        ("bias grads x2", lambda: (a["g1"].sum(0), a["g2"].sum(0)),
         lambda: (t["g1"].sum(0), t["g2"].sum(0))),
        ("sgd W1+W2 (1.85M floats)", np_sgd,
         lambda: (t["o1"].add_(t["w1"], alpha=-0.01), t["o2"].add_(t["w2"], alpha=-0.01))),
    ]


class _Stat:
    def __init__(self):
        self.wall, self.cpu = [], []

    def time(self, fn):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        self.wall.append(time.perf_counter() - w0)
        self.cpu.append(time.process_time() - c0)

    def cells(self, flops=None):
        wmin, wmed = min(self.wall) * 1e3, statistics.median(self.wall) * 1e3
        cells = f"{wmin:>7.2f}{wmed:>7.2f}{statistics.median(self.cpu) * 1e3:>7.2f}"
        if flops:
            cells += f"{flops / wmin / 1e6:>6.0f}"
        return cells


def run_rows(torch, rows, rounds, flops_of):
    """Each row's call four ways (np1, np2, t1, t2), interleaved call by call."""
    stats = {(name, v): _Stat() for name, *_ in rows for v in ("np1", "np2", "t1", "t2")}
    blas = threadpoolctl.threadpool_limits  # one call per switch
    for _ in range(rounds):
        for row in rows:
            name, np_call, t_call = row[0], row[-2], row[-1]
            for variant in ("np1", "np2", "t1", "t2"):
                threads = 1 if variant.endswith("1") else 2
                if variant.startswith("np"):
                    with blas(limits=threads, user_api="blas"):
                        stats[(name, variant)].time(np_call)
                else:
                    torch.set_num_threads(threads)
                    with torch.no_grad():
                        stats[(name, variant)].time(t_call)
    head = "".join(f"{v + ' wmin/wmed/cpu' + (' GF' if flops_of else ''):>{27 if flops_of else 21}}"
                   for v in ("np1", "np2", "t1", "t2"))
    print(f"{'(ms)':<30}{head}")
    sums = {v: 0.0 for v in ("np1", "np2", "t1", "t2")}
    for row in rows:
        name = row[0]
        flops = flops_of(row)
        cells = "".join(stats[(name, v)].cells(flops) for v in ("np1", "np2", "t1", "t2"))
        for v in sums:
            sums[v] += min(stats[(name, v)].wall) * 1e3
        print(f"{name:<30}{cells}")
    print(f"{'sum of wall min':<30}" + "".join(
        f"{sums[v]:>{27 if flops_of else 21}.2f}" for v in sums))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--skip", default="", help="comma list of: products,passes,step")
    args = parser.parse_args()
    import torch

    skip = set(filter(None, args.skip.split(",")))
    a = _arrays(np.random.RandomState(0))
    print(f"# {training.machine_load()}")
    if "products" not in skip:
        for _, _, np_call, t_call in product_rows(torch, a):  # warm up
            np_call(), t_call()
        run_rows(torch, product_rows(torch, a), args.rounds, lambda row: row[1])
    if "passes" not in skip:
        run_rows(torch, pass_rows(torch, a), args.rounds, lambda row: None)
    if "step" not in skip:
        torch.set_num_threads(2)
        step_floor.step_table(torch, "mlp", args.rounds, one_thread=False)
    print(f"# {training.machine_load()}")


if __name__ == "__main__":
    main()
