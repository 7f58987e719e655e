"""Why the MLP step's time under contention varies: rounds of steps of tensorflux and
TensorFlow alternating beside K CPU-bound hogs, each round with tensorflux's thread budget
state (BLAS threads, intra-op splits, the sampled load of others) and the round's wall and
process CPU per step.

    cd <worktree> && PYTHONPATH=$PWD TF_CPP_MIN_LOG_LEVEL=3 TF_USE_LEGACY_KERAS=1 \
        /opt/tfref/bin/python bench/contend_probe.py [--contend 2] [--rounds 20] [--steps 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import step_floor  # noqa: E402
import training  # noqa: E402


def _round(run, steps):
    walls = []
    c0 = time.process_time()
    for _ in range(steps):
        w0 = time.perf_counter()
        run()
        walls.append(time.perf_counter() - w0)
    cpu = (time.process_time() - c0) / steps * 1e3
    return statistics.median(walls) * 1e3, max(walls) * 1e3, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contend", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--variants", default="budget",
                        help="comma list alternated by round: budget (as configured), "
                             "split1 (no intra-op split), chunksN (N chunks per thread)")
    args = parser.parse_args()
    import tensorflux
    from tensorflux.runtime import thread_budget

    if args.contend:
        training.start_contention(args.contend)
        time.sleep(0.5)
    steps = {"tensorflux": step_floor._graph_step(tensorflux, args.model, False),
             "tensorflow": step_floor._graph_step(training._tf_compat_v1(), args.model, False)}
    for run in steps.values():
        for _ in range(3):
            run()
    state = thread_budget._PROCESS
    print(f"# {args.contend} hogs; {training.machine_load()}")
    print(f"{'variant':>8}{'round':>5}{'tfx med':>9}{'max':>8}{'cpu':>7}{'blas':>5}{'split':>6}"
          f"{'others':>13}"
          f"{'tf med':>9}{'max':>8}{'cpu':>7}{'load1':>7}")
    ratios = []
    from tensorflux.lib.numerics import intra_op

    variants = args.variants.split(",")
    original_splits, original_chunks = thread_budget.intra_op_splits, intra_op.CHUNKS_PER_THREAD
    per_variant: dict = {v: [] for v in variants}
    for i in range(args.rounds):
        variant = variants[i % len(variants)]
        thread_budget.intra_op_splits = (lambda *a: 1) if variant == "split1" else original_splits
        intra_op.CHUNKS_PER_THREAD = (int(variant[6:]) if variant.startswith("chunks")
                                      else original_chunks)
        with state.lock:
            state._apply()
        tfx = _round(steps["tensorflux"], args.steps)
        budget = (state.threads, state.splits, state.others)
        tf = _round(steps["tensorflow"], args.steps)
        ratios.append(tfx[0] / tf[0])
        per_variant[variant].append(tfx[0] / tf[0])
        print(f"{variant[:8]:>8}{i:>5}{tfx[0]:>9.1f}{tfx[1]:>8.1f}{tfx[2]:>7.1f}{budget[0]:>5}{budget[1]:>6}"
              f"{budget[2][0]:>6.1f},{budget[2][1]:>5.1f}{tf[0]:>9.1f}{tf[1]:>8.1f}{tf[2]:>7.1f}"
              f"{os.getloadavg()[0]:>7.2f}", flush=True)
    for variant, found in per_variant.items():
        print(f"# {variant}: tfx/TF per round median {statistics.median(found):.2f}, "
              f"min {min(found):.2f}, max {max(found):.2f} ({len(found)} rounds)")
    print(f"# ratio tfx/TF per round: median {statistics.median(ratios):.2f}, "
          f"min {min(ratios):.2f}, max {max(ratios):.2f}; {training.machine_load()}")


if __name__ == "__main__":
    main()
