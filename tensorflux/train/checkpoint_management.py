"""`tf.train.CheckpointManager`: numbered object-based checkpoints in one directory, the
oldest deleted beyond `max_to_keep` (one kept every `keep_checkpoint_every_n_hours`).

The manager's state lives in the directory's `checkpoint` file, in the format `tf.train.Saver`
writes (`model_checkpoint_path`, `all_model_checkpoint_paths` with their timestamps,
`last_preserved_timestamp`), so `tf.train.latest_checkpoint(directory)` finds its newest
checkpoint and a new manager on the same directory carries on where the last one stopped.
"""

from __future__ import annotations

import collections
import glob
import os
import time

from tensorflux.framework.tensor import Tensor
from tensorflux.ops.state.variables import Variable
from tensorflux.platform import tf_logging as logging
from tensorflux.train import checkpoint_restore, checkpoint_utils

__all__ = ["CheckpointManager"]


def _delete_checkpoint_files(prefix: str) -> None:
    for filename in [prefix + ".index"] + glob.glob(glob.escape(prefix) + ".data-?????-of-?????"):
        try:
            os.remove(filename)
        except FileNotFoundError:
            pass
        except OSError as err:
            logging.warning("Ignoring: could not delete %s: %s", filename, err)


class CheckpointManager:
    """Deletes old checkpoints (TF1 `tf.train.CheckpointManager`).

    Args:
        checkpoint: the `tf.train.Checkpoint` to save and manage.
        directory: where checkpoints and the `checkpoint` state file are written.
        max_to_keep: checkpoints kept, the oldest deleted first; None keeps all.
        keep_checkpoint_every_n_hours: a checkpoint leaving the kept set is preserved if it is
            at least this many hours newer than the last preserved one (None: never).
        checkpoint_name: the prefix of the checkpoint files ("ckpt" -> "ckpt-3").

    Raises:
        ValueError: `max_to_keep` is not None and not positive.
    """

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt"):
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got "
                             f"{max_to_keep}.")
        self._checkpoint = checkpoint
        self._save_counter_assign = None
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._directory = os.fspath(directory)
        self._checkpoint_prefix = os.path.join(self._directory, checkpoint_name)
        self._maybe_delete: collections.OrderedDict = collections.OrderedDict()
        now = time.time()
        state = checkpoint_utils.get_checkpoint_state(self._directory)
        if state is None:
            self._latest_checkpoint = None
            # a second back: a manager re-created at once still sees its first save as newer
            self._last_preserved_timestamp = now - 1.0
            return
        self._latest_checkpoint = state.model_checkpoint_path
        self._last_preserved_timestamp = state.last_preserved_timestamp
        if now < self._last_preserved_timestamp:
            logging.warning("time.time() returned a value %f seconds behind the last preserved "
                            "checkpoint timestamp.", self._last_preserved_timestamp - now)
            self._last_preserved_timestamp = now
        paths = list(state.all_model_checkpoint_paths)
        stamps = list(state.all_model_checkpoint_timestamps) or \
            [self._last_preserved_timestamp] * len(paths)
        # Only checkpoints newer than the last preserved one are managed (deletable); older
        # ones (preserved, or written by Checkpoint.save without timestamps) are left alone.
        for path, stamp in zip(paths, stamps):
            stamp = min(stamp, now)
            if stamp > self._last_preserved_timestamp:
                self._maybe_delete[path] = stamp

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def checkpoint(self):
        return self._checkpoint

    @property
    def latest_checkpoint(self):
        """The prefix of the newest checkpoint, or None."""
        return self._latest_checkpoint

    @property
    def checkpoints(self) -> list:
        """The prefixes of the managed checkpoints not yet deleted, oldest first."""
        return list(self._maybe_delete)

    def _sweep(self) -> None:
        if not self._max_to_keep:
            return
        while len(self._maybe_delete) > self._max_to_keep:
            path, stamp = self._maybe_delete.popitem(last=False)
            every = self._keep_checkpoint_every_n_hours
            if every and stamp - every * 3600.0 >= self._last_preserved_timestamp:
                self._last_preserved_timestamp = stamp
                continue
            _delete_checkpoint_files(path)

    def _record_state(self) -> None:
        checkpoint_utils.update_checkpoint_state(
            self._directory, self._latest_checkpoint, list(self._maybe_delete),
            all_model_checkpoint_timestamps=list(self._maybe_delete.values()),
            last_preserved_timestamp=self._last_preserved_timestamp,
            save_relative_paths=True)

    def save(self, checkpoint_number=None, session=None) -> str:
        """Saves `"<directory>/<checkpoint_name>-<n>"` (n: `checkpoint_number`, else the
        incremented `save_counter`, which is incremented either way), deletes checkpoints
        beyond `max_to_keep` and rewrites the state file; returns the new prefix.

        Raises:
            ValueError: no session.
        """
        session = checkpoint_restore.session_or_default(session)
        counted = self._checkpoint._increment_save_counter(session)
        if checkpoint_number is None:
            checkpoint_number = counted
        elif isinstance(checkpoint_number, (Tensor, Variable)):
            checkpoint_number = session.run(checkpoint_number)
        prefix = f"{self._checkpoint_prefix}-{int(checkpoint_number)}"
        path = self._checkpoint.write(prefix, session=session)
        self._maybe_delete.pop(path, None)
        self._maybe_delete[path] = time.time()
        self._latest_checkpoint = path
        self._sweep()
        self._record_state()
        return path
