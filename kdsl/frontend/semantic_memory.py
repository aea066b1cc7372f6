"""Program indexing, loads/stores, atomics, hints and device debugging."""

from __future__ import annotations

from typing import Any

from kdsl.frontend.readonly import read_only_root
from kdsl.frontend.semantic_base import unwrap
from kdsl.frontend.semantic_math import MathSemantic
from kdsl.ir.dialects import tile
from kdsl.ir.types import PointerType, ScalarType, f32, i1, i32
from kdsl.language.core import tensor

LOAD_CACHE = ("", ".ca", ".cg", ".cv")
STORE_CACHE = ("", ".wb", ".cg", ".cs", ".wt")
EVICTION = ("", "evict_normal", "evict_first", "evict_last")


class MemorySemantic(MathSemantic):
    """Everything that touches memory or the launch grid."""

    def program_id(self, axis: Any) -> tensor:
        a = self.const_int(axis, "program_id axis")
        if a not in (0, 1, 2):
            raise self.error(f"program_id axis must be 0, 1, or 2 but got {a}")
        return self.emit1(tile.ProgramIdOp, [], i32, axis=a)

    def num_programs(self, axis: Any) -> tensor:
        a = self.const_int(axis, "num_programs axis")
        if a not in (0, 1, 2):
            raise self.error(f"num_programs axis must be 0, 1 or 2, got {a}")
        return self.emit1(tile.NumProgramsOp, [], i32, axis=a)

    # --- helpers -------------------------------------------------------------------
    def _pointer(self, ptr: Any, what: str) -> tuple[tensor, PointerType]:
        if not isinstance(ptr, tensor) or not isinstance(ptr.dtype, PointerType):
            shown = ptr.type if isinstance(ptr, tensor) else repr(unwrap(ptr))
            raise self.error(f"{what} expects a pointer or a tile of pointers, got {shown}")
        return ptr, ptr.dtype

    def _writable(self, ptr: tensor, what: str) -> None:
        """Refuse a write through a pointer derived from a ``kl.const`` parameter (Triton's rule)."""
        name = read_only_root(ptr.handle, self.read_only) if self.read_only else None
        if name is not None:
            raise self.error(f"{what}: cannot store to a constant pointer (it derives from {name})")

    def _to_ptr_shape(self, ptr: tensor, x: Any, what: str) -> tensor:
        """Broadcast a mask/value to the pointer's shape (never the reverse)."""
        t = self.to_tensor(x)
        if not ptr.shape:
            if t.shape:
                raise self.error(f"{what} cannot be a tile (shape {t.shape}) when the pointer is a scalar")
            return t
        if len(t.shape) > len(ptr.shape) or self.broadcast_shapes(ptr.shape, t.shape) != ptr.shape:
            raise self.error(f"{what} of shape {t.shape} cannot be broadcast to the pointer shape {ptr.shape}")
        return self.broadcast_to(t, ptr.shape)

    def _grow_pointer(self, ptr: tensor, mask: Any, other: Any) -> tensor:
        """A load's pointer tile broadcasts *with* its mask and ``other`` (Triton's
        ``_load_legacy``: ``broadcast_impl_value(ptr, mask)``): a ``[1, N]`` row of pointers
        with an ``[M, N]`` mask loads an ``[M, N]`` tile. A scalar pointer never grows."""
        if not ptr.shape:
            return ptr
        # only tiles can grow it: a Python scalar (or scalar tensor) is never materialised here
        shapes = [x.shape for x in map(unwrap, (mask, other)) if isinstance(x, tensor) and x.shape]
        shape = self.broadcast_shapes(ptr.shape, *shapes)
        return ptr if shape == ptr.shape else self.broadcast_to(ptr, shape)

    def _mask(self, ptr: tensor, mask: Any) -> tensor | None:
        if unwrap(mask) is None:
            return None
        m = self._to_ptr_shape(ptr, mask, "mask")
        if m.dtype != i1:
            m = self.cast(m, i1)
        return m

    def _option(self, value: Any, allowed: tuple[str, ...], what: str) -> str | None:
        v = unwrap(value)
        v = "" if v is None else v
        if v not in allowed:
            raise self.error(f"unsupported {what} {v!r}; expected one of {', '.join(repr(a) for a in allowed if a)}")
        return v or None

    # --- load / store ----------------------------------------------------------
    def load(self, pointer: Any, mask: Any = None, other: Any = None, boundary_check: Any = (),
             padding_option: Any = "", cache_modifier: Any = "", eviction_policy: Any = "",
             volatile: Any = False) -> tensor:
        """Read through each pointer; masked-off lanes give ``other`` (cast to the pointee type)."""
        ptr, pty = self._pointer(pointer, "kl.load")
        if unwrap(boundary_check):
            raise self.error("kl.load: boundary_check is only supported for block pointers (kl.make_block_ptr)")
        if unwrap(padding_option):
            raise self.error("kl.load: padding_option is only supported for block pointers (kl.make_block_ptr)")
        ptr = self._grow_pointer(ptr, mask, other)
        m = self._mask(ptr, mask)
        operands = [ptr.handle]
        if m is not None:
            operands.append(m.handle)
        if unwrap(other) is not None:
            if m is None:
                raise self.error("kl.load: `other` cannot be given without `mask`")
            o = self.cast(self._to_ptr_shape(ptr, other, "other"), pty.pointee)
            operands.append(o.handle)
        return self.emit1(tile.LoadOp, operands, ptr.type.with_element(pty.pointee),
                          volatile=True if unwrap(volatile) else None,
                          cache=self._option(cache_modifier, LOAD_CACHE, "cache modifier"),
                          eviction=self._option(eviction_policy, EVICTION, "eviction policy"))

    def store(self, pointer: Any, value: Any, mask: Any = None, boundary_check: Any = (),
              cache_modifier: Any = "", eviction_policy: Any = "") -> None:
        """Write ``value`` (broadcast to the pointer shape, cast to the pointee type)."""
        ptr, pty = self._pointer(pointer, "kl.store")
        self._writable(ptr, "kl.store")
        if unwrap(boundary_check):
            raise self.error("kl.store: boundary_check is only supported for block pointers (kl.make_block_ptr)")
        val = self.cast(self._to_ptr_shape(ptr, value, "stored value"), pty.pointee)
        m = self._mask(ptr, mask)
        operands = [ptr.handle, val.handle] + ([m.handle] if m is not None else [])
        self.emit(tile.StoreOp, operands, [],
                  cache=self._option(cache_modifier, STORE_CACHE, "cache modifier"),
                  eviction=self._option(eviction_policy, EVICTION, "eviction policy"))

    # --- atomics --------------------------------------------------------------------
    def _sem_scope(self, sem: Any, scope: Any) -> dict[str, str | None]:
        s, c = unwrap(sem), unwrap(scope)
        if s is not None and s not in tile.MEM_SEMANTICS:
            raise self.error(f"unknown memory semantic {s!r}; expected one of {', '.join(tile.MEM_SEMANTICS)}")
        if c is not None and c not in tile.MEM_SCOPES:
            raise self.error(f"unknown memory scope {c!r}; expected one of {', '.join(tile.MEM_SCOPES)}")
        return {"sem": s, "scope": c}

    def _atomic_elem(self, pty: PointerType, what: str) -> ScalarType:
        if not isinstance(pty.pointee, ScalarType):
            raise self.error(f"{what} does not support pointers to pointers ({pty})")
        return pty.pointee

    def atomic_rmw(self, kind: str, pointer: Any, val: Any, mask: Any = None, sem: Any = None,
                   scope: Any = None) -> tensor:
        """``atomic_<kind>``: returns the old values; val/mask broadcast to the pointer."""
        ptr, pty = self._pointer(pointer, f"kl.atomic_{kind}")
        self._writable(ptr, f"kl.atomic_{kind}")
        elem = self._atomic_elem(pty, f"atomic_{kind}")
        if elem in (ScalarType("f16"), ScalarType("bf16")) and kind != "add":
            raise self.error(f"atomic_{kind} does not support {elem}")
        if elem.bitwidth < 16 or elem.name in ("i16", "u16"):
            raise self.error(f"atomic_{kind} does not support {elem}")
        if kind in ("and", "or", "xor") and not elem.is_integer:
            raise self.error(f"atomic_{kind} needs an integer pointee, got {elem}")
        v = self.cast(self._to_ptr_shape(ptr, val, "atomic value"), elem)
        m = self._mask(ptr, mask)
        operands = [ptr.handle, v.handle] + ([m.handle] if m is not None else [])
        return self.emit1(tile.AtomicRMWOp, operands, v.type, kind=kind, **self._sem_scope(sem, scope))

    def atomic_cas(self, pointer: Any, cmp: Any, val: Any, sem: Any = None, scope: Any = None) -> tensor:
        """Compare-and-swap per lane; returns the old values."""
        ptr, pty = self._pointer(pointer, "kl.atomic_cas")
        self._writable(ptr, "kl.atomic_cas")
        elem = self._atomic_elem(pty, "atomic_cas")
        if elem.bitwidth not in (16, 32, 64):
            raise self.error(f"atomic_cas only supports 16, 32 or 64-bit elements, got {elem}")
        c = self.cast(self._to_ptr_shape(ptr, cmp, "atomic_cas cmp"), elem)
        v = self.cast(self._to_ptr_shape(ptr, val, "atomic_cas value"), elem)
        return self.emit1(tile.AtomicCASOp, [ptr.handle, c.handle, v.handle], v.type, **self._sem_scope(sem, scope))

    # --- hints ---------------------------------------------------------------------
    def hint(self, x: Any, name: str, values: Any) -> tensor:
        """``multiple_of`` / ``max_contiguous``: one positive int per dimension."""
        t = self.to_tensor(x)
        raw = unwrap(values)
        vals = tuple(self.const_int(v, f"{name} value") for v in (raw if isinstance(raw, (tuple, list)) else [raw]))
        if len(vals) != max(len(t.shape), 1):
            raise self.error(f"{name} needs one value per dimension of shape {t.shape}, got {vals}")
        if any(v <= 0 for v in vals):
            raise self.error(f"{name} values must be positive, got {vals}")
        if not (isinstance(t.dtype, PointerType) or t.dtype.is_integer):
            raise self.error(f"{name} applies to integers or pointers, got {t.dtype}")
        return self.emit1(tile.HintOp, [t.handle], t.type, **{name: vals})

    def assume(self, cond: Any) -> None:
        """``kl.assume``: the condition must be a boolean (or integer, tested against zero) value."""
        c = self.to_tensor(cond)
        if not (isinstance(c.dtype, ScalarType) and c.dtype.is_integer):
            raise self.error(f"kl.assume expects a boolean condition, got {c.type}")

    # --- debugging ------------------------------------------------------------------
    def device_print(self, prefix: Any, args: tuple[Any, ...], hex: Any = False) -> None:
        p = unwrap(prefix)
        if not isinstance(p, str):
            raise self.error(f"device_print prefix must be a string, got {p!r}")
        ts = [self.to_tensor(a) for a in args]
        ts = [self.cast(t, f32) if isinstance(t.dtype, ScalarType) and t.dtype.is_fp8() else t for t in ts]
        self.emit(tile.PrintOp, [t.handle for t in ts], [], prefix=p, hex=True if unwrap(hex) else None)

    def device_assert(self, cond: Any, msg: Any = "") -> None:
        m = unwrap(msg)
        c = self.to_tensor(cond)
        if c.dtype != i1:
            c = self.cast(c, i1)
        self.emit(tile.AssertOp, [c.handle], [], message=str(m) if m is not None else "")
