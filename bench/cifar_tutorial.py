"""Unchanged CIFAR-10 TF1 tutorial: tensorflux against TensorFlow, alternating short rounds.

    python bench/cifar_tutorial.py TUTORIAL_DIR --data_dir=DIR [--steps 60] [--rounds 6]
        [--tfx CHECKOUT] [--python /opt/tfref/bin/python] [--only tensorflux|tensorflow]
        [--variant NAME:VAR=VAL,...]   (extra tensorflux runs with these environment settings)

TUTORIAL_DIR holds the tutorial's own files (cifar10.py, cifar10_input.py, cifar10_train.py),
run unchanged: `import tensorflow as tf` resolves to the framework under test through a
sys.modules alias (for TF 2.x: tf.compat.v1 with v2 behaviour off, plus the TF 1.x
`tf.contrib.framework.get_or_create_global_step`).

Each round runs the tutorial once per framework, each in its own subprocess (the order alternates
between rounds). The child reports, over the window between its first and last "sec/batch" log
line (so graph building and the initial queue fill are excluded):
  * the tutorial's own s/batch values (all but step 0),
  * the process CPU per batch, and its split per thread from /proc/self/task/*/stat:
    the training thread (the main thread, which calls session.run), the queue-runner
    (preprocessing) Python threads, and every other thread (grouped by thread name).
The parent prints every round, then medians and minima per framework, with the load average.
Not needed by the tests.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

_MARK = "@@CIFAR_BENCH@@"
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _thread_cpu():
    """Returns {tid: (name, cpu seconds)} for the threads of this process."""
    out = {}
    base = "/proc/self/task"
    for tid in os.listdir(base):
        try:
            with open(f"{base}/{tid}/stat") as f:
                stat = f.read()
            with open(f"{base}/{tid}/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out[int(tid)] = (comm, (int(fields[11]) + int(fields[12])) / _TICK)
    return out


class _Watch:
    """Wraps stdout; snapshots thread CPU at the first and at every later sec/batch line."""

    def __init__(self, stream):
        self._stream = stream
        self.first = None
        self.last = None
        self.sb = []

    def write(self, text):
        if "sec/batch" in text:
            snap = (time.time(), time.process_time(), _thread_cpu(), _py_names(), len(self.sb))
            if self.first is None:
                self.first = snap
            else:
                self.last = snap
                try:
                    self.sb.append(float(text.rsplit(";", 1)[1].split()[0]))
                except (IndexError, ValueError):
                    pass
        return self._stream.write(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _py_names():
    import threading
    return {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}


def _report(watch, log_frequency):
    if watch.first is None or watch.last is None:
        print(_MARK + json.dumps({"error": "fewer than two sec/batch lines"}), file=sys.stderr)
        return
    t0, c0, th0, _, _ = watch.first
    t1, c1, th1, names, n = watch.last
    names = {**watch.first[3], **names}
    steps = n * log_frequency
    main = os.getpid()
    split = {"train": 0.0, "prep": 0.0}
    other = {}
    for tid, (comm, cpu) in th1.items():
        d = cpu - th0.get(tid, (comm, 0.0))[1]
        if tid == main:
            split["train"] += d
        elif names.get(tid, "").startswith("QueueRunnerThread"):
            split["prep"] += d
        else:
            key = names.get(tid) or comm
            key = key.rstrip("0123456789-_ ") or comm
            other[key] = other.get(key, 0.0) + d
    print(_MARK + json.dumps({
        "sb": watch.sb, "steps": steps, "wall": t1 - t0, "cpu": c1 - c0,
        "train": split["train"], "prep": split["prep"], "other": other}), file=sys.stderr)


def _child(which, tutorial, argv):
    import runpy
    import types
    if which == "tensorflux":
        import tensorflux as tf
    else:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow.compat.v1 as tf
        tf.disable_v2_behavior()
        tf.logging.set_verbosity(tf.logging.ERROR)
        if not hasattr(tf, "contrib"):
            tf.contrib = types.SimpleNamespace(framework=types.SimpleNamespace(
                get_or_create_global_step=tf.train.get_or_create_global_step))
    sys.modules["tensorflow"] = tf
    sys.path.insert(0, tutorial)
    script = os.path.join(tutorial, "cifar10_train.py")
    # cifar10.py (this version) parses sys.argv on import, before cifar10_train.py adds its own
    # flags: import it first with its own flags only.
    own = ("--batch_size", "--data_dir", "--use_fp16")
    sys.argv = [script] + [a for a in argv if a.split("=")[0] in own]
    import cifar10  # noqa: F401
    sys.argv = [script] + argv
    watch = _Watch(sys.stdout)
    sys.stdout = watch
    freq = 10
    for a in argv:
        if a.startswith("--log_frequency="):
            freq = int(a.split("=", 1)[1])
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit:
        pass
    finally:
        sys.stdout = watch._stream
        _report(watch, freq)


def _run_one(args, name, rnd):
    which, _, spec = name.partition(":")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_USE_LEGACY_KERAS="1")
    env.update(e.split("=", 1) for e in spec.split(",") if e)
    env["PYTHONPATH"] = os.path.abspath(args.tfx) if which == "tensorflux" else "/nonexistent"
    train_dir = f"/tmp/cifar_bench_{os.getpid()}_{which}_{len(spec)}_{rnd}"
    cmd = [args.python, os.path.abspath(__file__), "--child", which, args.tutorial,
           f"--max_steps={args.steps}", f"--data_dir={args.data_dir}",
           f"--train_dir={train_dir}"]
    load = os.getloadavg()[0]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    subprocess.run(["rm", "-rf", train_dir])
    for line in out.stderr.splitlines():
        if line.startswith(_MARK):
            rec = json.loads(line[len(_MARK):])
            if "error" not in rec:
                rec["load"] = load
                return rec
    sys.exit(f"{which} failed:\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}")


def _fmt(which, r):
    n = max(r["steps"], 1)
    other = sorted(r["other"].items(), key=lambda kv: -kv[1])[:3]
    oth = ", ".join(f"{k} {v / n * 1e3:.0f}" for k, v in other)
    return (f"{which[:24]:24s} s/batch med {statistics.median(r['sb']):.3f} "
            f"min {min(r['sb']):.3f}; "
            f"CPU/batch {r['cpu'] / n * 1e3:.0f} ms (train {r['train'] / n * 1e3:.0f}, "
            f"prep {r['prep'] / n * 1e3:.0f}, other: {oth}); load {r['load']:.1f}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2], os.path.abspath(sys.argv[3]), sys.argv[4:])
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("tutorial")
    p.add_argument("--data_dir", required=True)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--tfx", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p.add_argument("--python", default="/opt/tfref/bin/python")
    p.add_argument("--only", choices=("tensorflux", "tensorflow"))
    p.add_argument("--variant", action="append", default=[],
                   help="NAME:VAR=VAL,... an extra tensorflux run with these settings")
    args = p.parse_args()
    order = [args.only] if args.only else ["tensorflux", "tensorflow"]
    order[1:1] = ["tensorflux:" + v.split(":", 1)[1] for v in args.variant]
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    res = {w: [] for w in order}
    for rnd in range(args.rounds):
        for which in (order if rnd % 2 == 0 else order[::-1]):
            r = _run_one(args, which, rnd)
            res[which].append(r)
            print(f"round {rnd} " + _fmt(which, r), flush=True)
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    for which, rs in res.items():
        meds = [statistics.median(r["sb"]) for r in rs]
        allsb = [x for r in rs for x in r["sb"]]
        per = {k: statistics.median(r[k] / max(r["steps"], 1) * 1e3 for r in rs)
               for k in ("cpu", "train", "prep")}
        print(f"{which[:24]:24s} s/batch median of round medians {statistics.median(meds):.3f}, "
              f"min {min(allsb):.3f}; CPU/batch median {per['cpu']:.0f} ms "
              f"(train {per['train']:.0f}, prep {per['prep']:.0f}); rounds {len(rs)}")
    if "tensorflow" in res and "tensorflux" in res:
        a = statistics.median(statistics.median(r["sb"]) for r in res["tensorflux"])
        b = statistics.median(statistics.median(r["sb"]) for r in res["tensorflow"])
        ca = statistics.median(r["cpu"] / r["steps"] for r in res["tensorflux"])
        cb = statistics.median(r["cpu"] / r["steps"] for r in res["tensorflow"])
        print(f"ratio tfx/TF: s/batch {a / b:.2f}x, CPU/batch {ca / cb:.2f}x")


if __name__ == "__main__":
    main()
