"""Kernel micro-benchmarks: the ops of bench/training.py's CNN (and its loss), one at a time.

Each case runs a single op (or a Conv2D -> BiasAdd -> Relu chain, which both systems fuse into
one kernel) on inputs held in variables (so nothing is fed or folded) as a session target (so
no output is copied out), at the shapes the training benchmark's CNN uses:
conv5x5x32 on 64x32x32x3 and conv5x5x64 on 64x16x16x32, 2x2 max pooling, bias/ReLU, fc and a
640x10000 softmax cross entropy; and the CIFAR-10 tutorial's (labels "cifar ...": 5x5 convs on
128x24x24x3 and 128x12x12x64, 3x3/2 SAME max pooling, LRN and their gradients).
TensorFlow's tf.compat.v1 runs the same ops (tf.raw_ops) in the same process when it is
importable, and the last column is the ratio to it.
tensorflux runs each case twice, interleaved: with its NumPy kernels (`TFX_JIT=0`) and with
the numba-compiled ones where they exist (the others are the same NumPy code in both).

    python bench/kernels.py [--repeat N] [--cases conv,pool,...] [--clock wall|cpu]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

_SAME5 = dict(strides=[1, 1, 1, 1], padding="SAME")
_POOL2 = dict(ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")


def _conv_bias_relu(tf, tensors, attrs):
    """A chain both systems fuse into one op when they run it (TF's remapper, our rewrite)."""
    x, w, b = tensors
    return tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b))


def _cases() -> list:
    """(label, op type or builder(tf, tensors, attrs), [(input name, shape or int array)],
    attrs) rows, float32 inputs."""
    conv1_x, conv1_w, conv1_y = (64, 32, 32, 3), (5, 5, 3, 32), (64, 32, 32, 32)
    conv2_x, conv2_w, conv2_y = (64, 16, 16, 32), (5, 5, 32, 64), (64, 16, 16, 64)
    sizes = np.array
    return [
        ("conv1 Conv2D", "Conv2D", [("input", conv1_x), ("filter", conv1_w)], _SAME5),
        ("conv1 Conv2DBackpropFilter", "Conv2DBackpropFilter",
         [("input", conv1_x), ("filter_sizes", sizes(conv1_w, np.int32)),
          ("out_backprop", conv1_y)], _SAME5),
        ("conv2 Conv2D", "Conv2D", [("input", conv2_x), ("filter", conv2_w)], _SAME5),
        ("conv2 Conv2DBackpropInput", "Conv2DBackpropInput",
         [("input_sizes", sizes(conv2_x, np.int32)), ("filter", conv2_w),
          ("out_backprop", conv2_y)], _SAME5),
        ("conv2 Conv2DBackpropFilter", "Conv2DBackpropFilter",
         [("input", conv2_x), ("filter_sizes", sizes(conv2_w, np.int32)),
          ("out_backprop", conv2_y)], _SAME5),
        ("pool1 MaxPool", "MaxPool", [("input", conv1_y)], _POOL2),
        ("pool1 MaxPoolGrad", "MaxPoolGrad",
         [("orig_input", conv1_y), ("orig_output", (64, 16, 16, 32)),
          ("grad", (64, 16, 16, 32))], _POOL2),
        ("pool2 MaxPoolGrad", "MaxPoolGrad",
         [("orig_input", conv2_y), ("orig_output", (64, 8, 8, 64)), ("grad", (64, 8, 8, 64))],
         _POOL2),
        ("pool1 AvgPool", "AvgPool", [("value", conv1_y)], _POOL2),
        ("pool1 AvgPoolGrad", "AvgPoolGrad",
         [("orig_input_shape", sizes(conv1_y, np.int32)), ("grad", (64, 16, 16, 32))], _POOL2),
        ("conv1 BiasAdd", "BiasAdd", [("value", conv1_y), ("bias", (32,))], {}),
        ("conv1 BiasAddGrad", "BiasAddGrad", [("out_backprop", conv1_y)], {}),
        ("conv1 Relu", "Relu", [("features", conv1_y)], {}),
        ("conv1 ReluGrad", "ReluGrad", [("gradients", conv1_y), ("features", conv1_y)], {}),
        ("conv1 +BiasAdd+Relu (fused)", _conv_bias_relu,
         [("input", conv1_x), ("filter", conv1_w), ("bias", (32,))], {}),
        ("conv2 +BiasAdd+Relu (fused)", _conv_bias_relu,
         [("input", conv2_x), ("filter", conv2_w), ("bias", (64,))], {}),
        ("fc MatMul", "MatMul", [("a", (64, 4096)), ("b", (4096, 512))], {}),
        ("xent 640x10000", "SparseSoftmaxCrossEntropyWithLogits",
         [("features", (640, 10000)),
          ("labels", np.random.RandomState(1).randint(0, 10000, 640).astype(np.int64))], {}),
        *_cifar10_cases(),
    ]


def _cifar10_cases() -> list:
    """The CIFAR-10 tutorial's ops (batch 128 of 24x24x3, bench/training.py --models cifar10)."""
    x1, w1, y1 = (128, 24, 24, 3), (5, 5, 3, 64), (128, 24, 24, 64)
    x2, w2 = (128, 12, 12, 64), (5, 5, 64, 64)
    sizes = np.array
    pool = dict(ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME")
    lrn = dict(depth_radius=4, bias=1.0, alpha=0.001 / 9.0, beta=0.75)
    return [
        ("cifar conv1 +BiasAdd+Relu", _conv_bias_relu,
         [("input", x1), ("filter", w1), ("bias", (64,))], {}),
        ("cifar conv1 BackpropFilter", "Conv2DBackpropFilter",
         [("input", x1), ("filter_sizes", sizes(w1, np.int32)), ("out_backprop", y1)], _SAME5),
        ("cifar conv2 +BiasAdd+Relu", _conv_bias_relu,
         [("input", x2), ("filter", w2), ("bias", (64,))], {}),
        ("cifar conv2 BackpropInput", "Conv2DBackpropInput",
         [("input_sizes", sizes(x2, np.int32)), ("filter", w2), ("out_backprop", x2)], _SAME5),
        ("cifar conv2 BackpropFilter", "Conv2DBackpropFilter",
         [("input", x2), ("filter_sizes", sizes(w2, np.int32)), ("out_backprop", x2)], _SAME5),
        ("cifar pool1 MaxPool 3x3/2", "MaxPool", [("input", y1)], pool),
        ("cifar pool1 MaxPoolGrad", "MaxPoolGrad",
         [("orig_input", y1), ("orig_output", x2), ("grad", x2)], pool),
        ("cifar conv1 ReluGrad", "ReluGrad", [("gradients", y1), ("features", y1)], {}),
        ("cifar conv1 BiasAddGrad", "BiasAddGrad", [("out_backprop", y1)], {}),
        ("cifar norm1 LRN", "LRN", [("input", x2)], lrn),
        ("cifar norm1 LRNGrad", "LRNGrad",
         [("input_grads", x2), ("input_image", x2), ("output_image", x2)], lrn),
    ]


# The clock of the timings: wall time, or the process's CPU time (all its threads: BLAS and
# TF's pool threads, spinning included), which the load of other processes changes far less.
_CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
_CLOCK = [time.perf_counter]


def _median_seconds(run, repeat: int) -> float:
    clock = _CLOCK[0]
    run()
    times = []
    for _ in range(repeat):
        start = clock()
        run()
        times.append(clock() - start)
    return statistics.median(times)


def _values(inputs) -> list:
    rng = np.random.RandomState(0)
    return [spec if isinstance(spec, np.ndarray) else
            rng.standard_normal(spec).astype(np.float32) for _, spec in inputs]


def time_case(tf, make_op, inputs, attrs, repeat: int) -> float:
    """Median seconds of one Session.run of the op, its inputs read from variables."""
    graph = tf.Graph()
    with graph.as_default():
        variables = [tf.Variable(value, trainable=False) for value in _values(inputs)]
        op = make_op([v.value() if hasattr(v, "value") else v for v in variables], attrs)
        target = op.op if hasattr(op, "op") else op[0].op
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        return _median_seconds(lambda: sess.run(target), repeat)


def tensorflux_maker(op_type):
    import tensorflux
    from tensorflux.framework.op_def import get_op_def

    if callable(op_type):
        return lambda tensors, attrs: op_type(tensorflux, tensors, attrs)
    op_def = get_op_def(op_type)
    return lambda tensors, attrs: op_def(*tensors, **attrs)


def tensorflow_maker(tf1, op_type, names):
    if callable(op_type):
        return lambda tensors, attrs: op_type(tf1, tensors, attrs)
    raw = getattr(tf1.raw_ops, op_type)
    return lambda tensors, attrs: raw(**dict(zip(names, tensors)), **attrs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--cases", default="", help="comma-separated substrings of labels")
    parser.add_argument("--clock", choices=sorted(_CLOCKS), default="wall",
                        help="wall time, or the process's CPU time (all threads)")
    args = parser.parse_args()
    _CLOCK[0] = _CLOCKS[args.clock]
    import tensorflux

    tf1 = None
    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow.compat.v1 as tf1

        tf1.disable_v2_behavior()
        tf1.logging.set_verbosity(tf1.logging.ERROR)
    except ImportError:
        pass
    wanted = [w for w in args.cases.split(",") if w]
    print(f"{'kernel':<30}{'numpy ms':>10}{'numba ms':>10}{'tensorflow ms':>15}{'vs TF':>8}")
    for label, op_type, inputs, attrs in _cases():
        if wanted and not any(w.lower() in label.lower() for w in wanted):
            continue
        times = {"0": [], "1": []}
        for _ in range(3):  # interleaved: the machine's load drifts
            for flag in times:
                os.environ["TFX_JIT"] = flag
                times[flag].append(time_case(tensorflux, tensorflux_maker(op_type), inputs,
                                             attrs, args.repeat))
        os.environ.pop("TFX_JIT")
        plain, ours = min(times["0"]), min(times["1"])
        theirs = None
        if tf1 is not None:
            names = [name for name, _ in inputs]
            theirs = time_case(tf1, tensorflow_maker(tf1, op_type, names), inputs, attrs,
                               args.repeat)
        ref = f"{theirs * 1e3:>15.2f}" if theirs else f"{'-':>15}"
        ratio = f"{ours / theirs:>7.2f}x" if theirs else f"{'-':>8}"
        print(f"{label:<30}{plain * 1e3:>10.2f}{ours * 1e3:>10.2f}{ref}{ratio}")


if __name__ == "__main__":
    main()
