"""`tf.distribute.experimental` (TF 1.15)."""

from tensorflux.distribute.central_storage_strategy import CentralStorageStrategy
from tensorflux.distribute.collective_strategy import (
    CollectiveCommunication,
    MultiWorkerMirroredStrategy,
)
from tensorflux.distribute.parameter_server_strategy import ParameterServerStrategy


class TPUStrategy:
    """Not provided: there are no TPUs."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("tf.distribute.experimental.TPUStrategy: tensorflux has no "
                                  "TPU support; use MirroredStrategy or OneDeviceStrategy.")


__all__ = ["CentralStorageStrategy", "CollectiveCommunication", "MultiWorkerMirroredStrategy",
           "ParameterServerStrategy", "TPUStrategy"]
