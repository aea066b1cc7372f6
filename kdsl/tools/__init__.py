"""Host-side helpers mirroring ``triton.tools`` (``kdsl.tools.tensor_descriptor``, ``kdsl.tools.mxfp``)."""
