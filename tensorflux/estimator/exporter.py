"""`tf.estimator.{Exporter, LatestExporter, BestExporter, FinalExporter}`.

`train_and_evaluate` calls each exporter of the EvalSpec after every evaluation with the
evaluated checkpoint: LatestExporter exports every time (keeping the newest
`exports_to_keep`), BestExporter when the metrics beat the best so far (by `compare_fn`, the
loss by default; the best is read back from the eval event files on the first call), and
FinalExporter only after the last evaluation.
"""

from __future__ import annotations

import abc
import glob
import os
import shutil

from tensorflux.platform import tf_logging as logging
from tensorflux.summary import writer as summary_writer

__all__ = ["Exporter", "LatestExporter", "BestExporter", "FinalExporter"]


class Exporter(abc.ABC):
    """Exports a model at the end of an evaluation (the base class)."""

    @property
    @abc.abstractmethod
    def name(self):
        """The directory name under `<model_dir>/export/` this exporter writes into."""

    @abc.abstractmethod
    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        """Exports `checkpoint_path` under `export_path`; returns the export directory or
        None."""


class _SavedModelExporter(Exporter):
    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False):
        if not name:
            raise ValueError("`name` must be a non-empty string.")
        if not callable(serving_input_receiver_fn):
            raise ValueError(f"serving_input_receiver_fn must be callable; got "
                             f"{serving_input_receiver_fn}")
        self._name = name
        self._serving_input_receiver_fn = serving_input_receiver_fn
        self._assets_extra = assets_extra
        self._as_text = as_text

    @property
    def name(self):
        return self._name

    def _export(self, estimator, export_path, checkpoint_path):
        return estimator.export_saved_model(export_path, self._serving_input_receiver_fn,
                                            assets_extra=self._assets_extra,
                                            as_text=self._as_text,
                                            checkpoint_path=checkpoint_path)


def _check_keep(exports_to_keep):
    if exports_to_keep is not None and exports_to_keep <= 0:
        raise ValueError(f"`exports_to_keep`, if provided, must be a positive number. Got "
                         f"{exports_to_keep}")


def _garbage_collect(export_path, exports_to_keep) -> None:
    if exports_to_keep is None or not os.path.isdir(export_path):
        return
    versions = sorted((int(d), d) for d in os.listdir(export_path) if d.isdigit())
    for _, stale in versions[:-exports_to_keep]:
        shutil.rmtree(os.path.join(export_path, stale), ignore_errors=True)


class LatestExporter(_SavedModelExporter):
    """Exports after every evaluation, keeping the newest `exports_to_keep` exports.

    Raises:
        ValueError: an empty name, or exports_to_keep <= 0.
    """

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False,
                 exports_to_keep=5):
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        _check_keep(exports_to_keep)
        self._exports_to_keep = exports_to_keep

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        path = self._export(estimator, export_path, checkpoint_path)
        _garbage_collect(export_path, self._exports_to_keep)
        return path


class FinalExporter(_SavedModelExporter):
    """Exports once, after the final evaluation."""

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        if not is_the_final_export:
            return None
        logging.info("Performing the final export in the end of training.")
        return self._export(estimator, export_path, checkpoint_path)


def _loss_smaller(best_eval_result, current_eval_result) -> bool:
    """The default BestExporter comparison: the current evaluation has a smaller loss.

    Raises:
        ValueError: a result is empty or has no "loss".
    """
    for result in (best_eval_result, current_eval_result):
        if not result or "loss" not in result:
            raise ValueError("best_eval_result and current_eval_result cannot be empty and "
                             "must contain the key 'loss'.")
    return best_eval_result["loss"] > current_eval_result["loss"]


class BestExporter(_SavedModelExporter):
    """Exports when an evaluation is the best so far by `compare_fn(best, current)`.

    The best result so far starts from the evaluation events in `model_dir` matching
    `event_file_pattern`, so a restarted job does not export a worse model.

    Raises:
        ValueError: compare_fn not callable or exports_to_keep <= 0.
    """

    def __init__(self, name="best_exporter", serving_input_receiver_fn=None,
                 event_file_pattern="eval/*.tfevents.*", compare_fn=_loss_smaller,
                 assets_extra=None, as_text=False, exports_to_keep=5):
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        if not callable(compare_fn):
            raise ValueError("`compare_fn` must be callable.")
        _check_keep(exports_to_keep)
        self._compare_fn = compare_fn
        self._event_file_pattern = event_file_pattern
        self._exports_to_keep = exports_to_keep
        self._best_eval_result = None
        self._read_events = False

    def _best_from_events(self, model_dir):
        best = None
        pattern = os.path.join(model_dir, self._event_file_pattern)
        for path in glob.glob(pattern):
            for event in summary_writer.summary_iterator(path):
                if not event.HasField("summary"):
                    continue
                result = {v.tag: v.simple_value for v in event.summary.value}
                if "loss" not in result and self._compare_fn is _loss_smaller:
                    continue
                if best is None or self._compare_fn(best, result):
                    best = result
        return best

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        if not self._read_events:
            self._read_events = True
            if self._event_file_pattern:
                self._best_eval_result = self._best_from_events(estimator.model_dir)
        if self._best_eval_result is None or self._compare_fn(self._best_eval_result,
                                                              eval_result):
            logging.info(f"Exporting a better model ({eval_result} instead of "
                         f"{self._best_eval_result})...")
            self._best_eval_result = eval_result
            path = self._export(estimator, export_path, checkpoint_path)
            _garbage_collect(export_path, self._exports_to_keep)
            return path
        return None
