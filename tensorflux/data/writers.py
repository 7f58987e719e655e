"""`tf.data.experimental.TFRecordWriter`: writes a dataset of strings to a TFRecord file.

`write(dataset)` returns an op (`DatasetToTFRecord`) that, each time it runs, iterates the
dataset from its start (with the values of the tensors it captures) and writes every element as
one record, replacing the file.
"""

from __future__ import annotations

from tensorflux.data.dataset_ops import Dataset, ElementError, RunContext, start
from tensorflux.data.iterator_ops import _lookup, _register, _release, _same_graph_captures
from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.lib.formats import tfrecord

__all__ = ["TFRecordWriter"]

DatasetToTFRecord = define_op(
    "DatasetToTFRecord", inputs=["filename: string", "compression_type: string",
                                 "captured: Tcaptured"],
    attrs=["Tcaptured: list(type) >= 0 = []", "dataset_id: int"], stateful=True,
    differentiable=False)


@DatasetToTFRecord.shape_fn
def _to_tfrecord_shape(*args, **_):
    return []


@DatasetToTFRecord.kernel(factory=True)
def _to_tfrecord_factory(dataset_id):
    entry = _lookup(dataset_id)
    captures = entry.dataset._all_captures()

    def kernel(filename, compression_type, *values):
        path = filename.item() if hasattr(filename, "item") else filename
        path = path.decode() if isinstance(path, bytes) else str(path)
        compression = compression_type.item() if hasattr(compression_type, "item") \
            else compression_type
        compression = compression.decode() if isinstance(compression, bytes) else compression
        try:
            options = tfrecord.TFRecordOptions(compression)
        except ValueError as err:
            raise errors.InvalidArgumentError(None, None, str(err)) from None
        ctx = RunContext(dict(zip(captures, values)))
        elements = start(entry.dataset, ctx)
        try:
            with tfrecord.TFRecordWriter(path, options) as writer:
                for element in elements:
                    if type(element) is ElementError:
                        raise element.error
                    record = element[0]
                    writer.write(record.item() if hasattr(record, "item") else record)
        finally:
            _release(elements, ctx)

    return kernel


class TFRecordWriter:
    """Writes the elements of a dataset of scalar strings to the TFRecord file `filename`.

    Example:
        >>> writer = tf.data.experimental.TFRecordWriter("/tmp/out.tfrecord")
        >>> sess.run(writer.write(tf.data.Dataset.from_tensor_slices([b"a", b"b"])))
    """

    def __init__(self, filename, compression_type=None):
        self._filename = convert_to_tensor(filename, dtypes.string, name="filename")
        self._compression_type = convert_to_tensor(compression_type or "", dtypes.string,
                                                   name="compression_type")

    def write(self, dataset):
        """The op that writes `dataset` (one tf.string scalar per element) to the file.

        Raises:
            TypeError: `dataset` is not a Dataset of single scalar strings.
        """
        if not isinstance(dataset, Dataset):
            raise TypeError(f"`dataset` must be a `tf.data.Dataset` object, got {dataset!r}")
        if dataset._types != [dtypes.string] or not dataset._shapes[0].is_compatible_with([]):
            raise TypeError(f"`dataset` must produce scalar `DT_STRING` tensors whereas it "
                            f"produces shape {dataset.output_shapes} and types "
                            f"{dataset.output_types}")
        captures = _same_graph_captures(dataset)
        dataset_id, entry = _register(dataset)
        op = DatasetToTFRecord(self._filename, self._compression_type, captures,
                               dataset_id=dataset_id, name="DatasetToTFRecord")
        op._tfx_dataset_entry = entry
        return op
