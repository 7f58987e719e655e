"""`tf.contrib.testing`: helpers to read back the events a test's summaries wrote
(TF 1.15's `latest_event_file`, `latest_events`, `latest_summaries`,
`simple_values_from_events`)."""

from __future__ import annotations

import glob
import os

from tensorflux.contrib import missing as _missing
from tensorflux.summary.writer import summary_iterator

__all__ = ["latest_event_file", "latest_events", "latest_summaries",
           "simple_values_from_events"]


def latest_event_file(base_dir):
    """The last (by name) `events.*` file in base_dir, or None."""
    paths = glob.glob(os.path.join(base_dir, "events.*"))
    return sorted(paths)[-1] if paths else None


def latest_events(base_dir) -> list:
    """The Event protos of the latest event file in base_dir ([] if there is none)."""
    path = latest_event_file(base_dir)
    return list(summary_iterator(path)) if path else []


def latest_summaries(base_dir) -> list:
    """The events of the latest event file that carry a summary."""
    return [e for e in latest_events(base_dir) if e.HasField("summary")]


def simple_values_from_events(events, tags) -> dict:
    """{tag: simple_value} of the highest step at which each of `tags` was written.

    Raises:
        ValueError: a summary of one of `tags` is not a scalar.
    """
    step_by_tag, value_by_tag = {}, {}
    for event in events:
        if not event.HasField("summary"):
            continue
        for value in event.summary.value:
            if value.tag not in tags:
                continue
            if not value.HasField("simple_value"):
                raise ValueError(f"Summary for {value.tag} is not a scalar.")
            if value.tag not in step_by_tag or event.step > step_by_tag[value.tag]:
                step_by_tag[value.tag] = event.step
                value_by_tag[value.tag] = value.simple_value
    return value_by_tag


__getattr__ = _missing.module_getattr("contrib.testing", {"*": "tf.test"})
