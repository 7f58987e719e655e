"""`projector`: ProjectorConfig and visualize_embeddings for TensorBoard's embedding projector.

`ProjectorConfig` is a protocol buffer message with TensorBoard's fields
(`model_checkpoint_path`, `embeddings` of EmbeddingInfo(`tensor_name`, `metadata_path`,
`bookmarks_path`, `tensor_shape`, `sprite` {`image_path`, `single_image_dim`}, `tensor_path`),
`model_checkpoint_dir`); `visualize_embeddings(writer, config)` writes it in text format to
`<logdir>/projector_config.pbtxt`, the file the projector plugin reads.
"""

import os

from google.protobuf import text_format

from tensorflux.contrib import missing as _missing
from tensorflux.contrib.tensorboard.plugins.projector.projector_config import (
    EmbeddingInfo, ProjectorConfig, SpriteMetadata)

__all__ = ["ProjectorConfig", "EmbeddingInfo", "SpriteMetadata", "visualize_embeddings",
           "PROJECTOR_FILENAME"]

PROJECTOR_FILENAME = "projector_config.pbtxt"


def visualize_embeddings(summary_writer, config) -> None:
    """Writes `config` to `projector_config.pbtxt` in the writer's log directory.

    Args:
        summary_writer: a tf.summary.FileWriter.
        config: a ProjectorConfig.

    Raises:
        ValueError: the writer has no logdir.
    """
    logdir = summary_writer.get_logdir()
    if logdir is None:
        raise ValueError("Summary writer must have a logdir")
    os.makedirs(logdir, exist_ok=True)
    with open(os.path.join(logdir, PROJECTOR_FILENAME), "w") as f:
        f.write(text_format.MessageToString(config))


__getattr__ = _missing.module_getattr("contrib.tensorboard.plugins.projector", {"*": None})
