"""Small end-to-end models whose forward passes run entirely on kdsl kernels.

Each model has deterministic random weights generated in-process, a kdsl
``forward`` (every op a :mod:`kdsl.ops` launch on the current backend) and a
``forward_numpy`` twin used as the reference.
"""

from __future__ import annotations

from kdsl.models.cnn import CNN, CNNConfig
from kdsl.models.gpt import GPT, GPTConfig

__all__ = ["CNN", "GPT", "CNNConfig", "GPTConfig"]
