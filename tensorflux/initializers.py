"""`tf.initializers`: the initializer classes and variable initializers under TF1's names."""

from tensorflux.ops.init_ops import Constant as constant
from tensorflux.ops.init_ops import GlorotNormal as glorot_normal
from tensorflux.ops.init_ops import GlorotUniform as glorot_uniform
from tensorflux.ops.init_ops import Identity as identity
from tensorflux.ops.init_ops import Ones as ones
from tensorflux.ops.init_ops import Orthogonal as orthogonal
from tensorflux.ops.init_ops import RandomNormal as random_normal
from tensorflux.ops.init_ops import RandomUniform as random_uniform
from tensorflux.ops.init_ops import TruncatedNormal as truncated_normal
from tensorflux.ops.init_ops import UniformUnitScaling as uniform_unit_scaling
from tensorflux.ops.init_ops import VarianceScaling as variance_scaling
from tensorflux.ops.init_ops import Zeros as zeros
from tensorflux.ops.init_ops import he_normal, he_uniform, lecun_normal, lecun_uniform
from tensorflux.ops.variables import global_variables_initializer as global_variables
from tensorflux.ops.variables import local_variables_initializer as local_variables
from tensorflux.ops.variables import variables_initializer as variables

__all__ = ["constant", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform", "identity",
           "lecun_normal", "lecun_uniform", "local_variables", "global_variables", "ones",
           "orthogonal", "random_normal", "random_uniform", "truncated_normal",
           "uniform_unit_scaling", "variables", "variance_scaling", "zeros"]
