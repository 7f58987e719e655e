"""`tf.test.Benchmark`: timing of ops in a session, reported to the log.

`run_op_benchmark` runs an op a few times to warm up, then `min_iters` timed runs, and reports
the median wall time; `report_benchmark` logs one entry and keeps it in `reported` (TF 1.x also
writes a proto when `TEST_REPORT_FILE_PREFIX` is set; tensorflux only logs).
"""

from __future__ import annotations

import time

import numpy as np

from tensorflux.platform import tf_logging as logging
from tensorflux.protos import config_pb2

__all__ = ["Benchmark", "benchmark_config"]


def benchmark_config():
    """A `ConfigProto` for benchmarks (TF 1.x turns graph rewrites off; tensorflux has none)."""
    return config_pb2.ConfigProto()


class Benchmark:
    """Base class of benchmarks: subclasses define `benchmark*` methods that report timings."""

    def __init__(self):
        self.reported: list = []

    def _name(self, name):
        if name:
            return name
        return type(self).__name__

    def report_benchmark(self, iters=None, cpu_time=None, wall_time=None, throughput=None,
                         extras=None, name=None, metrics=None):
        """Logs one benchmark entry and returns it as a dict.

        Args:
            iters: number of timed iterations.
            cpu_time, wall_time: seconds per iteration.
            throughput: e.g. MB/s.
            extras: a dict of further named values (numbers or strings).
            name: the entry's name (default: the class name).
            metrics: a list of dicts with `name` and `value` (and optional min/max values).

        Returns:
            The entry as a dict.
        """
        entry = {"name": self._name(name), "iters": iters, "cpu_time": cpu_time,
                 "wall_time": wall_time, "throughput": throughput, "extras": dict(extras or {}),
                 "metrics": list(metrics or [])}
        self.reported.append(entry)
        logging.info(f"Benchmark [{entry['name']}] iters: {iters}, wall_time: {wall_time}, "
                     f"cpu_time: {cpu_time}, throughput: {throughput}, "
                     f"extras: {entry['extras']}")
        return entry

    def run_op_benchmark(self, sess, op_or_tensor, feed_dict=None, burn_iters=2, min_iters=10,
                         store_trace=False, store_memory_usage=True, name=None, extras=None,
                         mbs=0):
        """Times `sess.run(op_or_tensor)` and reports the median wall time per run.

        Args:
            sess: the Session to run in.
            op_or_tensor: what to run (anything `Session.run` fetches).
            feed_dict: feeds of every run.
            burn_iters: untimed warm-up runs.
            min_iters: timed runs.
            store_trace, store_memory_usage: accepted for TF 1.x compatibility.
            name: the entry's name.
            extras: further values to report.
            mbs: megabytes processed per run; when > 0 a throughput in MB/s is reported.

        Returns:
            A dict with `iters`, `wall_time` (median seconds), `extras`, `name`, `throughput`.

        Raises:
            ValueError: `min_iters` < 1 or `burn_iters` < 0.
        """
        if min_iters < 1 or burn_iters < 0:
            raise ValueError(f"run_op_benchmark needs min_iters >= 1 and burn_iters >= 0, got "
                             f"{min_iters} and {burn_iters}")
        for _ in range(burn_iters):
            sess.run(op_or_tensor, feed_dict=feed_dict)
        deltas = []
        for _ in range(min_iters):
            start = time.perf_counter()
            sess.run(op_or_tensor, feed_dict=feed_dict)
            deltas.append(time.perf_counter() - start)
        median = float(np.median(deltas))
        throughput = mbs / median if mbs and median > 0 else None
        values = {"iters": min_iters, "wall_time": median, "extras": dict(extras or {}),
                  "name": self._name(name), "throughput": throughput}
        self.report_benchmark(iters=min_iters, wall_time=median, extras=extras, name=name,
                              throughput=throughput)
        return values
