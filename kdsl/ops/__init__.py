"""kdsl.ops: a small kernel library for vision and language models, written in kdsl.

One module per kernel family; each holds readable ``@kdsl.kernel`` kernels, a
Python wrapper that allocates the outputs and picks the grid and block sizes,
and a numpy reference (``*_ref``, computed in float64) that the tests compare
against. Wrappers take numpy arrays or kdsl device arrays and return the same
kind (see :mod:`kdsl.ops._common`). ``profile()`` records every launch per
kernel name (the demo's timing table).

=================  ===========================================================
module             kernels
=================  ===========================================================
``elementwise``    vector add; GELU (erf, tanh), SiLU, ReLU epilogues
``dropout``        low-memory dropout (Philox, seed only)
``softmax``        fused row softmax; online softmax for rows longer than a tile
``norms``          LayerNorm forward/backward (dW, dB), RMSNorm forward
``matmul``         fp32 / fp16 / int8 / int8-weight-only matmul, bias+activation
                   +residual epilogue, grouped ordering, batched
``attention``      flash-attention forward (causal or not), rotary embeddings
``conv``           2-D convolution (implicit GEMM, NCHW/NHWC), max/avg pooling
``embedding``      token + position embedding gather
=================  ===========================================================
"""

from __future__ import annotations

from kdsl.ops._common import KernelStat, Profiler, launch, profile, to_numpy
from kdsl.ops.attention import attention, attention_ref, rope, rope_ref
from kdsl.ops.conv import conv2d, conv2d_ref, pool2d, pool2d_ref
from kdsl.ops.dropout import dropout, dropout_ref
from kdsl.ops.elementwise import ACTIVATIONS, activation, activation_ref, add, gelu
from kdsl.ops.embedding import embedding, embedding_ref
from kdsl.ops.matmul import matmul, matmul_ref, quantize_per_channel
from kdsl.ops.norms import (
    layer_norm,
    layer_norm_backward,
    layer_norm_backward_ref,
    layer_norm_ref,
    rms_norm,
    rms_norm_ref,
)
from kdsl.ops.softmax import softmax, softmax_ref

__all__ = [
    "ACTIVATIONS", "KernelStat", "Profiler", "activation", "activation_ref", "add", "attention", "attention_ref",
    "conv2d", "conv2d_ref", "dropout", "dropout_ref", "embedding", "embedding_ref", "gelu", "launch",
    "layer_norm", "layer_norm_backward", "layer_norm_backward_ref", "layer_norm_ref", "matmul", "matmul_ref",
    "pool2d", "pool2d_ref", "profile", "quantize_per_channel", "rms_norm", "rms_norm_ref", "rope", "rope_ref",
    "softmax", "softmax_ref", "to_numpy",
]  # fmt: skip
