"""Image ops: codecs, resizing, crops, color, boxes, non-max suppression, patches, quality
metrics and projective transforms.

The family facade: importing it registers every op, kernel and gradient of the family.
"""

from tensorflux.ops.image import (
    geometry,
    boxes,
    codecs,
    color,
    crop,
    quality,
    nms,
    patches,
    projective,
    volume_patches,
    jpeg_ops,
    resize,
    util,
)
