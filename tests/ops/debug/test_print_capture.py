"""tf.print of a SparseTensor (alone and inside a structure: the quoted text of its three
components, as TF prints it), captured with tf.test.TestCase.captureWritesToStream, which
sees what kernels write to the stream's file descriptor."""

import os
import sys

import pytest

import tensorflux as tf


class PrintCaptureTest(tf.test.TestCase):

    def test_sparse_tensor_alone_and_in_a_list(self):
        sp = tf.SparseTensor([[0, 1], [2, 0]], tf.constant([5, -7], tf.int64), [3, 2])
        with self.captureWritesToStream(sys.stdout) as printed:
            self.evaluate(tf.print(sp, output_stream=sys.stdout))
            self.evaluate(tf.print("got", [sp], sep="|", output_stream=sys.stdout))
        want = ("'SparseTensor(indices=[[0 1]\n [2 0]], values=[5 -7], shape=[3 2])'")
        self.assertEqual(printed.contents(), f"{want}\ngot|[{want}]\n")

    def test_capture_restores_the_stream_and_sees_raw_fd_writes(self):
        sys.stderr.flush()
        with self.captureWritesToStream(sys.stderr) as printed:
            os.write(sys.stderr.fileno(), b"raw bytes\n")
            self.evaluate(tf.print(tf.range(4), summarize=1))
        self.assertEqual(printed.contents(), "raw bytes\n[0 ... 3]\n")
        with self.captureWritesToStream(sys.stderr) as again:
            pass
        self.assertEqual(again.contents(), "")

    def test_stream_without_descriptor(self):
        class NoFd:
            def fileno(self):
                raise OSError("no descriptor")

        with pytest.raises(ValueError, match="needs a stream with a file descriptor"):
            with self.captureWritesToStream(NoFd()):
                pass
