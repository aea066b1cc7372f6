"""kdsl: a Triton-style tile kernel DSL with OpenCL, Vulkan and CPU backends."""
