"""OpenCL C for non-temporal (streaming) stores: the ``nontemporal`` hint of
``wi.gstore`` / ``wi.gvstore`` / ``wi.block_store``.

Clang's ``__builtin_nontemporal_store(value, ptr)`` becomes an x86 ``movnt*``
store on PoCL, which skips the read-for-ownership of the output cache line
(copy 8 -> 13 GB/s, docs/OPTIMIZER.md). A vector ``movntps`` needs an address
aligned to the whole vector and clang assumes ``floatN*`` is so aligned (an
unaligned one faults on PoCL), so vector stores check the address at run time
and fall back to the plain store -- rows of contiguous tensors are aligned, so the
branch is predictable. The hint never changes results.
"""

from __future__ import annotations


def scalar(value: str, ptr: str) -> str:
    """One streaming store of a scalar (any C type the pointer points to)."""
    return f"__builtin_nontemporal_store({value}, {ptr});"


def vector(ctype: str, lanes: int, itemsize: int, value: str, ptr: str, plain: str) -> str:
    """The store ``plain`` (of ``value`` at ``ptr``, element-aligned) as a streaming store
    where ``ptr`` is vector-aligned.

    ``ctype`` is the C vector type (``float4``) and ``ptr`` a pointer to its
    elements; non-power-of-two widths keep the plain store.
    """
    if lanes & (lanes - 1):
        return plain
    mask = lanes * itemsize - 1
    return (f"if ((((ulong)({ptr})) & {mask}) == 0) "
            f"__builtin_nontemporal_store({value}, (__global {ctype}*)({ptr})); else {plain}")
