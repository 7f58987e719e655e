"""`tf.quantization`: fake quantization, quantize/dequantize and quantized concatenation."""

from tensorflux.ops.array.fake_quant import (
    fake_quant_with_min_max_args,
    fake_quant_with_min_max_args_gradient,
    fake_quant_with_min_max_vars,
    fake_quant_with_min_max_vars_gradient,
    fake_quant_with_min_max_vars_per_channel,
    fake_quant_with_min_max_vars_per_channel_gradient,
)
from tensorflux.ops.array.quantize import (dequantize, quantize, quantize_and_dequantize,
                                          quantized_concat)
