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


def _schedstat():
    # The calling thread's (run ns, run-queue wait ns) from /proc (Linux schedstats).
    try:
        with open("/proc/thread-self/schedstat") as f:
            run, wait, _ = f.read().split()
        return int(run), int(wait)
    except (OSError, ValueError):
        return 0, 0


def _round(run, steps):
    """(median wall ms, max wall ms, process CPU ms, driver run ms, driver run-queue wait ms)
    per step: wall - run - wait is the driver's time blocked (waiting for helpers or the
    GIL)."""
    walls = []
    c0 = time.process_time()
    s0 = _schedstat()
    for _ in range(steps):
        w0 = time.perf_counter()
        run()
        walls.append(time.perf_counter() - w0)
    s1 = _schedstat()
    cpu = (time.process_time() - c0) / steps * 1e3
    return (statistics.median(walls) * 1e3, max(walls) * 1e3, cpu,
            (s1[0] - s0[0]) / steps / 1e6, (s1[1] - s0[1]) / steps / 1e6, sum(walls) / steps * 1e3)


def _spinning_pool(thread_budget, spin_ms: float):
    """An intra-op pool whose idle workers poll (yielding the CPU, not the GIL-free core) for
    `spin_ms` before they block: they stay runnable between a step's split kernels."""
    import queue

    class SpinningPool(thread_budget.KernelPool):
        def _serve(self) -> None:
            while True:
                deadline = time.perf_counter() + spin_ms / 1e3
                while True:
                    try:
                        fn = self._work.get_nowait()
                        break
                    except queue.Empty:
                        if time.perf_counter() > deadline:
                            fn = self._work.get()
                            break
                        os.sched_yield()
                if fn is None:
                    return
                fn = fn[0] if type(fn) is tuple else fn
                try:
                    fn()
                finally:
                    with self._lock:
                        self._idle += 1

    return SpinningPool(1, "probe-spin", counted=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contend", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--variants", default="budget",
                        help="comma list alternated by round: budget (as configured), "
                             "split1 (no intra-op split), chunksN (N chunks per thread), "
                             "spinN (intra-op helpers poll N ms for the next part before "
                             "they sleep)")
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
          f"{'tf med':>9}{'max':>8}{'cpu':>7}{'load1':>7}"
          f"{'drv run':>8}{'rq wait':>8}{'blocked':>8}")
    ratios = []
    from tensorflux.lib.numerics import intra_op

    variants = args.variants.split(",")
    original_splits, original_chunks = thread_budget.intra_op_splits, intra_op.CHUNKS_PER_THREAD
    per_variant: dict = {v: [] for v in variants}
    spin_pools: dict = {}
    for i in range(args.rounds):
        variant = variants[i % len(variants)]
        thread_budget.intra_op_splits = (lambda *a: 1) if variant == "split1" else original_splits
        intra_op.CHUNKS_PER_THREAD = (int(variant[6:]) if variant.startswith("chunks")
                                      else original_chunks)
        with state.lock:
            state._apply()
            if variant.startswith("spin") and state.splits > 1:
                spin_ms = float(variant[4:])
                pool = spin_pools.setdefault(spin_ms, _spinning_pool(thread_budget, spin_ms))
                intra_op.configure(state.splits, pool.try_run, state.elementwise)
            elif state.intra_pool is not None:
                intra_op.configure(state.splits, state.intra_pool.try_run
                                   if max(state.splits, state.elementwise) > 1 else None,
                                   state.elementwise)
        tfx = _round(steps["tensorflux"], args.steps)
        budget = (state.threads, state.splits, state.others)
        tf = _round(steps["tensorflow"], args.steps)
        ratios.append(tfx[0] / tf[0])
        per_variant[variant].append(tfx[0] / tf[0])
        print(f"{variant[:8]:>8}{i:>5}{tfx[0]:>9.1f}{tfx[1]:>8.1f}{tfx[2]:>7.1f}{budget[0]:>5}{budget[1]:>6}"
              f"{budget[2][0]:>6.1f},{budget[2][1]:>5.1f}{tf[0]:>9.1f}{tf[1]:>8.1f}{tf[2]:>7.1f}"
              f"{os.getloadavg()[0]:>7.2f}{tfx[3]:>8.1f}{tfx[4]:>8.1f}"
              f"{tfx[5] - tfx[3] - tfx[4]:>8.1f}", flush=True)
    for variant, found in per_variant.items():
        print(f"# {variant}: tfx/TF per round median {statistics.median(found):.2f}, "
              f"min {min(found):.2f}, max {max(found):.2f} ({len(found)} rounds)")
    print(f"# ratio tfx/TF per round: median {statistics.median(ratios):.2f}, "
          f"min {min(ratios):.2f}, max {max(ratios):.2f}; {training.machine_load()}")


if __name__ == "__main__":
    main()
