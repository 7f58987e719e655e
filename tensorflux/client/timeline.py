"""`tensorflux.client.timeline` (TF1's `tensorflow.python.client.timeline`)."""

from tensorflux.runtime.timeline import AllocationMaximum, StepStatsAnalysis, Timeline

__all__ = ["Timeline", "StepStatsAnalysis", "AllocationMaximum"]
