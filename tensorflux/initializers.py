"""`tf.initializers`: the initializer classes and variable initializers under TF1's names."""

from tensorflux.ops.state.initializers import Constant as constant
from tensorflux.ops.state.initializers import GlorotNormal as glorot_normal
from tensorflux.ops.state.initializers import GlorotUniform as glorot_uniform
from tensorflux.ops.state.initializers import Identity as identity
from tensorflux.ops.state.initializers import Ones as ones
from tensorflux.ops.state.initializers import Orthogonal as orthogonal
from tensorflux.ops.state.initializers import RandomNormal as random_normal
from tensorflux.ops.state.initializers import RandomUniform as random_uniform
from tensorflux.ops.state.initializers import TruncatedNormal as truncated_normal
from tensorflux.ops.state.initializers import UniformUnitScaling as uniform_unit_scaling
from tensorflux.ops.state.initializers import VarianceScaling as variance_scaling
from tensorflux.ops.state.initializers import Zeros as zeros
from tensorflux.ops.state.initializers import he_normal, he_uniform, lecun_normal, lecun_uniform
from tensorflux.ops.state.variables import global_variables_initializer as global_variables
from tensorflux.ops.state.variables import local_variables_initializer as local_variables
from tensorflux.ops.state.variables import variables_initializer as variables
from tensorflux.ops.data_flow.lookup import tables_initializer

__all__ = ["constant", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform", "identity",
           "lecun_normal", "lecun_uniform", "local_variables", "global_variables", "ones",
           "orthogonal", "random_normal", "random_uniform", "tables_initializer",
           "truncated_normal", "uniform_unit_scaling", "variables", "variance_scaling", "zeros"]
