"""Summary ops: each kernel returns one serialized `Summary` protobuf (a string scalar).

ScalarSummary writes `simple_value`s, HistogramSummary a `HistogramProto` with TensorFlow's
default exponential buckets, ImageSummary PNG-encoded images, AudioSummaryV2 WAV audio,
TensorSummaryV2 a `tensor` value with plugin metadata, and MergeSummary concatenates the
values of several summaries (duplicate tags are an error, as in TF).
"""

from __future__ import annotations

import io
import wave

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.framework.tensor_util import make_tensor_proto
from tensorflux.lib.formats import png
from tensorflux.protos import summary_pb2

_SCALAR_STRING = "summary: string"


def _summary_pb2():
    return summary_pb2


def _as_text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _result(summary) -> np.ndarray:
    return np.array(summary.SerializeToString(), dtype=object)


def _scalar_string_shape(*_args, **_kwargs):
    return TensorShape([])


# -- bucket limits ---------------------------------------------------------------------------

def _default_buckets() -> np.ndarray:
    positive = []
    value = 1e-12
    while value < 1e20:
        positive.append(value)
        value *= 1.1
    positive = np.asarray(positive)
    return np.concatenate([-positive[::-1], [0.0], positive, [np.finfo(np.float64).max]])


_BUCKET_LIMITS = _default_buckets()


def histogram_proto(values: np.ndarray):
    """A HistogramProto of `values` with TF's default bucket limits (empty buckets dropped
    except the one before each used bucket, as TF writes them)."""
    summary_pb2 = _summary_pb2()
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    proto = summary_pb2.HistogramProto()
    if values.size == 0:
        return proto
    if not np.all(np.isfinite(values)):
        raise errors.InvalidArgumentError(None, None, "Nan in summary histogram for: values")
    proto.min = float(values.min())
    proto.max = float(values.max())
    proto.num = float(values.size)
    proto.sum = float(values.sum())
    proto.sum_squares = float(np.dot(values, values))
    counts = np.bincount(np.searchsorted(_BUCKET_LIMITS, values, side="right"),
                         minlength=len(_BUCKET_LIMITS))[:len(_BUCKET_LIMITS)]
    used = np.nonzero(counts)[0]
    keep = np.zeros(len(counts), bool)
    keep[used] = True
    keep[np.maximum(used - 1, 0)] = True
    for index in np.nonzero(keep)[0]:
        proto.bucket_limit.append(float(_BUCKET_LIMITS[index]))
        proto.bucket.append(float(counts[index]))
    return proto


# -- ops -------------------------------------------------------------------------------------

ScalarSummary = define_op("ScalarSummary", inputs=["tags: string", "values: T"],
                          outputs=[_SCALAR_STRING], attrs=["T: realnumbertype"],
                          differentiable=False)
ScalarSummary.shape_fn(_scalar_string_shape)


@ScalarSummary.kernel
def _scalar_summary(tags, values):
    tags = np.asarray(tags)
    values = np.asarray(values)
    if tags.shape != values.shape:
        raise errors.InvalidArgumentError(
            None, None, f"tags and values not the same shape: {list(tags.shape)} != "
            f"{list(values.shape)}")
    summary = _summary_pb2().Summary()
    for tag, value in zip(tags.reshape(-1), values.reshape(-1)):
        summary.value.add(tag=_as_text(tag), simple_value=float(value))
    return _result(summary)


HistogramSummary = define_op("HistogramSummary", inputs=["tag: string", "values: T"],
                             outputs=[_SCALAR_STRING], attrs=["T: realnumbertype = float32"],
                             differentiable=False)
HistogramSummary.shape_fn(_scalar_string_shape)


@HistogramSummary.kernel
def _histogram_summary(tag, values):
    summary = _summary_pb2().Summary()
    summary.value.add(tag=_as_text(np.asarray(tag).item()), histo=histogram_proto(values))
    return _result(summary)


ImageSummary = define_op(
    "ImageSummary", inputs=["tag: string", "tensor: T"], outputs=[_SCALAR_STRING],
    attrs=["max_images: int >= 1 = 3", "T: {uint8, float32, float16, float64} = float32",
           "bad_color: tensor = None"], differentiable=False)
ImageSummary.shape_fn(_scalar_string_shape)


def _to_uint8(images: np.ndarray) -> np.ndarray:
    """TF's rule: uint8 as is; floats scaled so the batch fits [0, 255] (max 255 if all >= 0,
    else centred at 127.5), non-finite pixels painted red."""
    if images.dtype == np.uint8:
        return images
    images = images.astype(np.float64)
    finite = np.isfinite(images)
    values = images[finite]
    if values.size == 0:
        return np.zeros(images.shape, np.uint8)
    low, high = values.min(), values.max()
    if low >= 0:
        scale = 255.0 / high if high > 0 else 0.0
        offset = 0.0
    else:
        scale = 127.0 / max(abs(low), abs(high))
        offset = 128.0
    out = np.where(finite, images * scale + offset, 0.0)
    out = np.clip(np.round(out), 0, 255).astype(np.uint8)
    bad = ~np.all(finite, axis=-1)
    if np.any(bad):
        out[bad] = [255, 0, 0, 255][:out.shape[-1]]
    return out


@ImageSummary.kernel
def _image_summary(tag, tensor, *, max_images):
    images = np.asarray(tensor)
    if images.ndim != 4 or images.shape[-1] not in (1, 3, 4):
        raise errors.InvalidArgumentError(
            None, None, f"Tensor must be 4-D with last dim 1, 3, or 4, not {list(images.shape)}")
    tag = _as_text(np.asarray(tag).item())
    summary = _summary_pb2().Summary()
    batch = images[:max_images]
    encoded = _to_uint8(batch)
    for i, image in enumerate(encoded):
        name = f"{tag}/image" if len(batch) == 1 else f"{tag}/image/{i}"
        value = summary.value.add(tag=name)
        value.image.height, value.image.width, value.image.colorspace = image.shape
        value.image.encoded_image_string = png.encode(image)
    return _result(summary)


AudioSummaryV2 = define_op(
    "AudioSummaryV2", inputs=["tag: string", "tensor: float32", "sample_rate: float32"],
    outputs=[_SCALAR_STRING], attrs=["max_outputs: int >= 1 = 3"], differentiable=False)
AudioSummaryV2.shape_fn(_scalar_string_shape)


def _wav(samples: np.ndarray, rate: int) -> bytes:
    pcm = (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(pcm.shape[1])
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(pcm.tobytes())
    return buffer.getvalue()


@AudioSummaryV2.kernel
def _audio_summary(tag, tensor, sample_rate, *, max_outputs):
    audio = np.asarray(tensor, dtype=np.float32)
    if audio.ndim == 2:
        audio = audio[:, :, None]
    if audio.ndim != 3:
        raise errors.InvalidArgumentError(
            None, None, f"Tensor must be 3-D or 2-D, got: {list(np.shape(tensor))}")
    tag = _as_text(np.asarray(tag).item())
    rate = float(sample_rate)
    summary = _summary_pb2().Summary()
    clips = audio[:max_outputs]
    for i, clip in enumerate(clips):
        name = f"{tag}/audio" if len(clips) == 1 else f"{tag}/audio/{i}"
        value = summary.value.add(tag=name)
        value.audio.sample_rate = rate
        value.audio.num_channels = clip.shape[1]
        value.audio.length_frames = clip.shape[0]
        value.audio.content_type = "audio/wav"
        value.audio.encoded_audio_string = _wav(clip, int(rate))
    return _result(summary)


TensorSummaryV2 = define_op(
    "TensorSummaryV2", inputs=["tag: string", "tensor: T", "serialized_summary_metadata: string"],
    outputs=[_SCALAR_STRING], attrs=["T: type"], differentiable=False)
TensorSummaryV2.shape_fn(_scalar_string_shape)


@TensorSummaryV2.kernel
def _tensor_summary(tag, tensor, serialized_summary_metadata):
    summary = _summary_pb2().Summary()
    value = summary.value.add(tag=_as_text(np.asarray(tag).item()))
    metadata = np.asarray(serialized_summary_metadata).item()
    if metadata:
        value.metadata.ParseFromString(metadata)
    array = np.asarray(tensor)
    value.tensor.CopyFrom(make_tensor_proto(array, dtype=None if array.dtype != object
                                            else "string"))
    return _result(summary)


MergeSummary = define_op("MergeSummary", inputs=["inputs: N * string"],
                         outputs=[_SCALAR_STRING], attrs=["N: int >= 1"], differentiable=False)
MergeSummary.shape_fn(_scalar_string_shape)


@MergeSummary.kernel
def _merge_summary(*inputs):
    summary_pb2 = _summary_pb2()
    merged = summary_pb2.Summary()
    seen = set()
    for serialized in inputs:
        for item in np.asarray(serialized, dtype=object).reshape(-1):
            part = summary_pb2.Summary()
            try:
                part.ParseFromString(item)
            except Exception as err:  # noqa: BLE001 - protobuf's DecodeError
                raise errors.InvalidArgumentError(
                    None, None, f"Could not parse one of the summary inputs: {err}") from None
            for value in part.value:
                if value.tag in seen:
                    raise errors.InvalidArgumentError(
                        None, None, f"Duplicate tag {value.tag} found in summary inputs")
                seen.add(value.tag)
                merged.value.add().CopyFrom(value)
    return _result(merged)
