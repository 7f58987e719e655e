"""Makes the shared op-test helpers (op_helpers, array_checks, conv_refs, sparse_helpers)
importable from the family folders below."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
