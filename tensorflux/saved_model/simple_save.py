"""The one-call SavedModel export for serving (TF1 `tf.saved_model.simple_save`)."""

from __future__ import annotations

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.saved_model import builder, signature_constants, signature_def_utils, tag_constants

__all__ = ["simple_save"]


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None):
    """Saves `session`'s graph and variables for serving under the "serve" tag.

    The signature is a predict SignatureDef of `inputs` / `outputs` ({key: Tensor}) under
    "serving_default"; ASSET_FILEPATHS (e.g. vocabulary files of lookup tables) are copied;
    devices are cleared.

    Example:
        >>> tf.saved_model.simple_save(sess, "/tmp/model/1", {"x": x}, {"y": y})
    """
    signature_def_map = {
        signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
            signature_def_utils.predict_signature_def(inputs, outputs)}
    with session.graph.as_default():
        assets = graph_mod.get_collection(GraphKeys.ASSET_FILEPATHS)
    saved = builder.SavedModelBuilder(export_dir)
    saved.add_meta_graph_and_variables(session, tags=[tag_constants.SERVING],
                                       signature_def_map=signature_def_map,
                                       assets_collection=assets, main_op=legacy_init_op,
                                       clear_devices=True)
    saved.save()
