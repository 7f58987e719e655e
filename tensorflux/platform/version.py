"""Version constants of `tf.VERSION`, `tf.__version__` and the GraphDef format.

`VERSION` reports the TensorFlow 1.x API level tensorflux implements (the `tf.compat.v1`
surface of TensorFlow 1.15), not the version of the tensorflux package itself, so programs that
compare `tf.__version__` against "1.x" or "2" take their TF1 branch. The package's own version
is `TENSORFLUX_VERSION`.

`GRAPH_DEF_VERSION` and its bounds follow TensorFlow 1.15's `versions.proto` conventions: a
GraphDef we write claims producer version 134, and we accept GraphDefs from any producer.
"""

VERSION = "1.15.0"
__version__ = VERSION
GIT_VERSION = "tensorflux-v0.1.0"
COMPILER_VERSION = "python"
TENSORFLUX_VERSION = "0.1.0"

GRAPH_DEF_VERSION = 134
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0

# Build facts `tf.sysconfig` and `tf.CXX11_ABI_FLAG` report; there is no C++ build here.
CXX11_ABI_FLAG = 0
MONOLITHIC_BUILD = 0
