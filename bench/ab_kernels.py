"""Interleaved A/B of one training step with a kernel change off ("old") and on ("new"), step
by step in one process, CPU and wall time (TensorFlow's and PyTorch's steps in the same rounds
with `--peers`).

    PYTHONPATH=$PWD /opt/tfref/bin/python bench/ab_kernels.py --model lstm --change xent \
        [--rounds 20] [--one-thread] [--peers]

Changes:
- `xent`: the compiled last pass of the sparse softmax cross-entropy (lib/numerics/xent_jit.py)
  against the NumPy passes it replaces.
- `lstm_pointwise`: the remapper's `_LSTMCellPointwise` fusion (runtime/remapper.py) against
  the unfused cell (two sessions of one graph, their plans built with the rule on and off).
- `hoist`: the remapper's hoisted input products (runtime/lstm_inputs.py: `x_t @ K_x` for
  all steps as one product, forward and backward) against the per-step products.
- `cell_grad`: the fused backward cell (`_LSTMCellPointwiseGrad`, runtime/lstm_cells.py)
  against the backward's unfused nodes (the forward fused in both).
- `xent_bias`: the output layer's bias gradient summed inside the cross-entropy pass
  (runtime/remapper.py `fold_xent_bias_grad`) against its BiasAddGrad.
- `stacked`: the step gradients stacked once for the input, kernel and bias gradients
  (runtime/lstm_inputs.py `_share_stacked_grads`) against three ConcatV2s.
- `backward`: cell_grad, xent_bias and stacked together against none of them.
- `all`: xent and lstm_pointwise together against neither.
- `transpose`: the swapped product's transposing copy in cache tiles
  (lib/numerics/transpose_jit.py) against NumPy's copy of the transposed view.
- `mlp23`: transpose and gemm_update together against neither.
- `gemm_update`: weight gradients applied inside the product's register tiles
  (lib/numerics/gemm_update_jit.py) against BLAS's product and the compiled update.
- `xent_rows`: the whole-row compiled float32 cross-entropy (lib/numerics/xent_jit.py
  `softmax_rows`) against the NumPy passes with the compiled last pass.
- `xent_stop23`: xent_rows and xent_split together against neither.
- `xent_split`: the cross-entropy's row blocks on the products' split threads when BLAS has one
  thread (ops/nn/core.py `XENT_ROWS_ON_SPLITS`) against inline.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

if "--one-thread" in sys.argv:  # before NumPy loads OpenBLAS
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    os.environ["NUMBA_NUM_THREADS"] = "1"
    os.environ["OMP_NUM_THREADS"] = "1"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import training  # noqa: E402


def _xent_switch():
    from tensorflux.lib.numerics import xent_jit

    original = xent_jit.supports

    def use(new: bool) -> None:
        xent_jit.supports = original if new else (lambda *args: False)

    return use


def _xent_rows_switch():
    from tensorflux.lib.numerics import xent_jit

    def use(new: bool) -> None:
        xent_jit.FUSED_ROWS = new

    return use


def _xent_stop23_switch():
    switches = [_xent_rows_switch(), _xent_split_switch()]

    def use(new: bool) -> None:
        for switch in switches:
            switch(new)

    return use


def _xent_split_switch():
    from tensorflux.ops.nn import core

    def use(new: bool) -> None:
        core.XENT_ROWS_ON_SPLITS = new

    return use


def _rewrite_switch(name: str):
    def make():
        from tensorflux.runtime import rewrites

        original = getattr(rewrites, name)

        def use(new: bool) -> None:
            setattr(rewrites, name, original if new else (lambda nodes, protected: list(nodes)))

        return use

    return make


def _all_switch():
    switches = [_xent_switch(), _rewrite_switch("fuse_lstm_pointwise")()]

    def use(new: bool) -> None:
        for switch in switches:
            switch(new)

    return use


def _hoist_switch():
    from tensorflux.runtime import lstm_inputs

    def use(new: bool) -> None:
        lstm_inputs.HOIST_INPUT_PRODUCTS = new

    return use


def _xent_bias_switch():
    from tensorflux.runtime import remapper

    def use(new: bool) -> None:
        remapper.FOLD_XENT_BIAS_GRAD = new

    return use


def _stacked_switch():
    from tensorflux.runtime import lstm_inputs

    def use(new: bool) -> None:
        lstm_inputs.SHARE_STACKED_GRADS = new

    return use


def _backward_switch():
    switches = [_cell_grad_switch(), _xent_bias_switch(), _stacked_switch()]

    def use(new: bool) -> None:
        for switch in switches:
            switch(new)

    return use


def _cell_grad_switch():
    from tensorflux.runtime import lstm_cells

    def use(new: bool) -> None:
        lstm_cells.FUSE_CELL_GRADIENTS = new

    return use


def _transpose_switch():
    from tensorflux.lib.numerics import transpose_jit

    original = transpose_jit.MIN_ELEMENTS

    def use(new: bool) -> None:
        transpose_jit.MIN_ELEMENTS = original if new else 1 << 62

    return use


def _gemm_update_switch():
    from tensorflux.lib.numerics import gemm_update_jit

    original = gemm_update_jit.MIN_ELEMENTS

    def use(new: bool) -> None:
        gemm_update_jit.MIN_ELEMENTS = original if new else 1 << 62

    return use


def _mlp23_switch():
    switches = [_transpose_switch(), _gemm_update_switch()]

    def use(new: bool) -> None:
        for switch in switches:
            switch(new)

    return use


CHANGES = {"mlp23": _mlp23_switch, "transpose": _transpose_switch,
           "gemm_update": _gemm_update_switch,
           "cell_grad": _cell_grad_switch, "stacked": _stacked_switch,
           "backward": _backward_switch,
           "xent_bias": _xent_bias_switch, "xent": _xent_switch,
           "lstm_pointwise": _rewrite_switch("fuse_lstm_pointwise"), "hoist": _hoist_switch,
           "all": _all_switch, "xent_split": _xent_split_switch,
           "xent_rows": _xent_rows_switch, "xent_stop23": _xent_stop23_switch}
# Changes made when a step's plan is built: "old" and "new" are two sessions.
_PLAN_TIME = {"lstm_pointwise", "hoist", "all", "cell_grad", "xent_bias",
              "stacked", "backward"}


def _session(tf, model: str, one_thread: bool):
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="lstm")
    parser.add_argument("--change", choices=sorted(CHANGES), default="xent")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--one-thread", action="store_true")
    parser.add_argument("--peers", action="store_true", help="TensorFlow and PyTorch too")
    args = parser.parse_args()
    import tensorflux

    use = CHANGES[args.change]()
    if args.change in _PLAN_TIME:
        runs = {}
        for name, new in (("old", False), ("new", True)):
            use(new)
            step = _session(tensorflux, args.model, args.one_thread)
            step()  # builds the plan with the change on or off
            runs[name] = _switched(use, new, step)
    else:
        tfx = _session(tensorflux, args.model, args.one_thread)
        runs = {"old": lambda: (use(False), tfx())[1], "new": lambda: (use(True), tfx())[1]}
    if args.peers:
        import torch

        if args.one_thread:
            torch.set_num_threads(1)
        runs["tensorflow"] = _session(training._tf_compat_v1(), args.model, args.one_thread)
        runs["pytorch"] = _torch_step(torch, args.model)
    for run in runs.values():
        for _ in range(3):
            run()
    cpu: dict = {k: [] for k in runs}
    wall: dict = {k: [] for k in runs}
    print(f"# {training.machine_load()}")
    for _ in range(args.rounds):
        for name, run in runs.items():
            c0, w0 = time.process_time(), time.perf_counter()
            run()
            cpu[name].append(time.process_time() - c0)
            wall[name].append(time.perf_counter() - w0)
    print(f"# after: {training.machine_load()}")
    print(f"{'variant':<12}{'wall med':>10}{'wall min':>10}{'cpu med':>10}{'cpu min':>10}")
    for name in runs:
        print(f"{name:<12}{statistics.median(wall[name]) * 1e3:>10.1f}"
              f"{min(wall[name]) * 1e3:>10.1f}{statistics.median(cpu[name]) * 1e3:>10.1f}"
              f"{min(cpu[name]) * 1e3:>10.1f}")


def _switched(use, new: bool, step):
    def run():
        use(new)
        return step()

    return run


def _torch_step(torch, model: str):
    import step_floor

    return step_floor._torch_step(torch, model)


if __name__ == "__main__":
    main()
