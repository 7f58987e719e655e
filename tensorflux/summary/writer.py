"""Event files for TensorBoard: `FileWriter`, `FileWriterCache`, `summary_iterator`.

An event file is a TFRecord file of `Event` protobufs named
`events.out.tfevents.<seconds>.<hostname><suffix>`; its first event carries the file version
"brain.Event:2". Writes are appended under a lock and flushed by `flush()`, `close()` and a
background timer every `flush_secs`.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import warnings

from tensorflux.framework import errors
from tensorflux.lib.formats import tfrecord
from tensorflux.platform import gfile
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import event_pb2, summary_pb2


def _event_pb2():
    return event_pb2


class EventFileWriter:
    """Appends Event protos to one event file."""

    def __init__(self, logdir: str, max_queue: int = 10, flush_secs: float = 120,
                 filename_suffix: str = ""):
        self._logdir = str(logdir)
        gfile.makedirs(self._logdir)  # an OSError as TF's status class, naming the path
        name = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}"
                f"{filename_suffix or ''}")
        self._path = os.path.join(self._logdir, name)
        self._lock = threading.Lock()
        with gfile.status_errors(self._path):  # e.g. PermissionDeniedError naming the file
            self._file = open(self._path, "ab")  # noqa: SIM115 - closed in close()
        self._closed = False
        self._flush_secs = flush_secs
        self._stop = threading.Event()
        self._flusher = threading.Thread(target=self._flush_loop, daemon=True,
                                         name="tfx-event-flusher")
        self._flusher.start()
        self.add_event(_event_pb2().Event(wall_time=time.time(), file_version="brain.Event:2"))
        self.flush()

    def get_logdir(self) -> str:
        return self._logdir

    @property
    def path(self) -> str:
        return self._path

    def _flush_loop(self):
        while not self._stop.wait(self._flush_secs):
            try:
                self.flush()
            except errors.OpError as err:  # e.g. a full disk: said once per failure, not fatal
                logging.error(f"Failed to flush the event file: {err}")

    def add_event(self, event) -> None:
        """Appends `event`; on a closed writer a no-op with a warning (TF 1.x), until `reopen`."""
        data = tfrecord.encode_record(event.SerializeToString())
        with self._lock:
            if self._closed:
                warnings.warn("Attempting to use a closed FileWriter. The operation will be a "
                              "noop unless the FileWriter is explicitly reopened.", stacklevel=3)
                return
            with gfile.status_errors(self._path):  # e.g. ResourceExhaustedError: disk full
                self._file.write(data)

    def flush(self) -> None:
        with self._lock:
            if not self._closed:
                with gfile.status_errors(self._path):
                    self._file.flush()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._stop.set()
            with gfile.status_errors(self._path):
                try:
                    self._file.flush()
                finally:
                    self._file.close()

    def reopen(self) -> None:
        with self._lock:
            if self._closed:
                self._file = open(self._path, "ab")  # noqa: SIM115
                self._closed = False
                self._stop = threading.Event()
                self._flusher = threading.Thread(target=self._flush_loop, daemon=True)
                self._flusher.start()


class FileWriter:
    """TF1 `tf.summary.FileWriter(logdir, graph=None, max_queue=10, flush_secs=120, ...)`."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        self._writer = EventFileWriter(logdir, max_queue, flush_secs, filename_suffix or "")
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def get_logdir(self) -> str:
        return self._writer.get_logdir()

    def _event(self, global_step=None, **fields):
        event = _event_pb2().Event(wall_time=time.time(), **fields)
        if global_step is not None:
            event.step = int(global_step)
        self._writer.add_event(event)

    def add_event(self, event) -> None:
        self._writer.add_event(event)

    def add_summary(self, summary, global_step=None) -> None:
        """Adds a Summary proto or serialized Summary bytes (what summary ops return)."""

        if isinstance(summary, (bytes, bytearray)):
            parsed = summary_pb2.Summary()
            parsed.ParseFromString(bytes(summary))
            summary = parsed
        elif hasattr(summary, "item") and not hasattr(summary, "value"):
            return self.add_summary(summary.item(), global_step)
        event = _event_pb2().Event(wall_time=time.time(), summary=summary)
        if global_step is not None:
            event.step = int(global_step)
        self._writer.add_event(event)

    def add_graph(self, graph, global_step=None, graph_def=None) -> None:
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        if graph is not None:
            graph_def = graph.as_graph_def(add_shapes=True)
        if graph_def is None:
            raise TypeError("add_graph needs a Graph or a GraphDef")
        self._event(global_step, graph_def=graph_def.SerializeToString())

    def add_meta_graph(self, meta_graph_def, global_step=None) -> None:
        self._event(global_step, meta_graph_def=meta_graph_def.SerializeToString())

    def add_run_metadata(self, run_metadata, tag, global_step=None) -> None:
        tagged = _event_pb2().TaggedRunMetadata(tag=tag,
                                                run_metadata=run_metadata.SerializeToString())
        self._event(global_step, tagged_run_metadata=tagged)

    def add_session_log(self, session_log, global_step=None) -> None:
        self._event(global_step, session_log=session_log)

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()

    def reopen(self) -> None:
        self._writer.reopen()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class FileWriterCache:
    """One FileWriter per log directory, shared by the hooks and supervisors of a process."""

    _lock = threading.Lock()
    _cache: dict = {}

    @staticmethod
    def get(logdir) -> FileWriter:
        with FileWriterCache._lock:
            writer = FileWriterCache._cache.get(logdir)
            if writer is None:
                writer = FileWriter(logdir)
                FileWriterCache._cache[logdir] = writer
            return writer

    @staticmethod
    def clear() -> None:
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache.clear()


def summary_iterator(path):
    """Yields the Event protos of an event file."""
    for record in tfrecord.tf_record_iterator(path):
        event = _event_pb2().Event()
        event.ParseFromString(record)
        yield event
