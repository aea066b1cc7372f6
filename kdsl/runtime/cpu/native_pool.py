"""A thread pool in native code: workers wait and claim slices without the GIL.

Why: the pure-Python pool (:class:`kdsl.runtime.cpu.pool.Pool`) hands a launch to
its workers through a queue and an event. Every hand-off wakes Python threads that
must take the GIL before they can call the kernel, which costs 50-100 µs per
launch on two cores -- so launches of less work than that ran on one thread. Here
the workers are Python threads that enter :data:`WORKER` once and never come back
to Python: they wait on a futex, claim slices with atomics and call the kernel's
``kdsl_run`` directly. A launch costs a few µs; launches arriving back to back
find the workers still spinning and start without a system call.

The protocol, on one block of memory shared by the caller and the workers (offsets
in :data:`_IR`):

* ``ticket`` (64 bits) holds ``generation << 32 | next slice``. A launch writes its
  job into ``job[generation & 1]`` and then publishes ``ticket``; a thread claims a
  slice with a compare-and-swap that also checks the generation. A straggler that
  read the job of an older generation fails its swap, so it never runs a slice
  of a job it did not read whole (a seqlock; two job slots because the next
  launch writes one slot while stragglers may still read the other).
* ``done`` counts finished slices; the caller returns when it reaches the slice
  count. Slices are claimed until none is left, by the caller too, so a thread
  slowed down by other load holds up a launch by at most one slice.
* ``gen32`` is the futex word workers sleep on after spinning; ``sleepers`` and
  ``waiting`` let the other side skip the wake-up system call when nobody sleeps
  (sequentially consistent on both sides, so no wake-up is lost).

Only Linux has futexes; :func:`supported` says whether this machine can use the
pool (the system call number comes from :data:`_SYS_FUTEX`, the ``syscall``
function's address from libc through ctypes, so the JIT links no symbol).
"""

from __future__ import annotations

import ctypes
import functools
import platform
import sys
import threading
from typing import Any

import llvmlite.binding as llvm

from kdsl.runtime.cpu.target import host

# the futex system call's number by machine (Linux); other machines use the Python pool
_SYS_FUTEX = {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98, "riscv64": 98, "loongarch64": 98,
              "ppc64le": 221, "ppc64": 221, "s390x": 238}  # fmt: skip

POOL_BYTES = 384
_SPIN = 320  # i64: pause iterations before sleeping
_SYSCALL = 328  # ptr: libc's syscall()
_FUTEX_NR = 336  # i64
_CLOCK = 344  # ptr: libc's clock_gettime()
_MINE = 352  # i64: programs the calling thread ran in the last launch
SPIN_ITERATIONS = 4000  # ~40-100 µs of pause instructions: back-to-back launches find the workers awake

WorkerFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
LaunchFn = ctypes.CFUNCTYPE(
    ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32,
    ctypes.c_int64, ctypes.c_int64,
)
StopFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

# the spin-wait hint instruction, and its declaration
_PAUSE = {"x86_64": ("call void @llvm.x86.sse2.pause()", "declare void @llvm.x86.sse2.pause()"),
          "aarch64": ('call void asm sideeffect "yield", ""()', "")}

# Offsets: 0 ticket i64 | 64 gen32 i32, 68 sleepers i32, 72 stop i32 | 128 done i32, 132 waiting i32 |
# 192 job0, 256 job1: +0 run ptr, +8 argv ptr, +16 gx, +20 gy, +24 gz (i32), +32 total i64, +40 nslices i64 |
# 320 spin i64, 328 syscall ptr, 336 futex number i64, 344 clock_gettime ptr, 352 the caller's programs i64.
_IR = r"""
define private void @futex(ptr %p, ptr %word, i64 %op, i64 %val) {
  %scp = getelementptr i8, ptr %p, i64 @SYSCALL@
  %sc = load ptr, ptr %scp, align 8
  %nrp = getelementptr i8, ptr %p, i64 @FUTEX_NR@
  %nr = load i64, ptr %nrp, align 8
  %r = call i64 (i64, ...) %sc(i64 %nr, ptr %word, i64 %op, i64 %val, ptr null)
  ret void
}

define private void @pause() {
  PAUSE
  ret void
}

; run slices of the job whose ticket was t0 until none is left or a newer job is published;
; returns the number of programs this thread ran
define private i64 @claim(ptr %p, i64 %t0) {
entry:
  %g = lshr i64 %t0, 32
  %par = and i64 %g, 1
  %joff = mul i64 %par, 64
  %joff2 = add i64 %joff, 192
  %job = getelementptr i8, ptr %p, i64 %joff2
  %run = load atomic ptr, ptr %job monotonic, align 8
  %argvp = getelementptr i8, ptr %job, i64 8
  %argv = load atomic ptr, ptr %argvp monotonic, align 8
  %gxp = getelementptr i8, ptr %job, i64 16
  %gx = load atomic i32, ptr %gxp monotonic, align 4
  %gyp = getelementptr i8, ptr %job, i64 20
  %gy = load atomic i32, ptr %gyp monotonic, align 4
  %gzp = getelementptr i8, ptr %job, i64 24
  %gz = load atomic i32, ptr %gzp monotonic, align 4
  %totalp = getelementptr i8, ptr %job, i64 32
  %total = load atomic i64, ptr %totalp monotonic, align 8
  %nsp = getelementptr i8, ptr %job, i64 40
  %ns = load atomic i64, ptr %nsp monotonic, align 8
  %donep = getelementptr i8, ptr %p, i64 128
  %waitp = getelementptr i8, ptr %p, i64 132
  br label %loop
loop:
  %t = phi i64 [ %t0, %entry ], [ %old, %retry ], [ %t3, %next ]
  %ran = phi i64 [ 0, %entry ], [ %ran, %retry ], [ %ran1, %next ]
  %tg = lshr i64 %t, 32
  %same = icmp eq i64 %tg, %g
  br i1 %same, label %check, label %exit
check:
  %idx = and i64 %t, 4294967295
  %more = icmp ult i64 %idx, %ns
  br i1 %more, label %cas, label %exit
cas:
  %t1 = add i64 %t, 1
  %pair = cmpxchg ptr %p, i64 %t, i64 %t1 acq_rel acquire, align 8
  %old = extractvalue { i64, i1 } %pair, 0
  %ok = extractvalue { i64, i1 } %pair, 1
  br i1 %ok, label %run_slice, label %retry
retry:
  br label %loop
run_slice:
  %base = udiv i64 %total, %ns
  %extra = urem i64 %total, %ns
  %lt = icmp ult i64 %idx, %extra
  %mn = select i1 %lt, i64 %idx, i64 %extra
  %s0 = mul i64 %idx, %base
  %start = add i64 %s0, %mn
  %inc = zext i1 %lt to i64
  %len = add i64 %base, %inc
  %end = add i64 %start, %len
  call void %run(ptr %argv, i32 %gx, i32 %gy, i32 %gz, i64 %start, i64 %end)
  %ran1 = add i64 %ran, %len
  %d = atomicrmw add ptr %donep, i32 1 seq_cst, align 4
  %d1 = add i32 %d, 1
  %ns32 = trunc i64 %ns to i32
  %last = icmp eq i32 %d1, %ns32
  br i1 %last, label %notify, label %next
notify:
  %w = load atomic i32, ptr %waitp seq_cst, align 4
  %sleeping = icmp ne i32 %w, 0
  br i1 %sleeping, label %wake, label %next
wake:
  call void @futex(ptr %p, ptr %donep, i64 129, i64 1)
  br label %next
next:
  %t3 = load atomic i64, ptr %p acquire, align 8
  br label %loop
exit:
  ret i64 %ran
}

define void @kdsl_pool_worker(ptr %p) {
entry:
  %genp = getelementptr i8, ptr %p, i64 64
  %sleepp = getelementptr i8, ptr %p, i64 68
  %stopp = getelementptr i8, ptr %p, i64 72
  %spinp = getelementptr i8, ptr %p, i64 @SPIN@
  %spin = load i64, ptr %spinp, align 8
  br label %top
top:
  %t = load atomic i64, ptr %p acquire, align 8
  %ignored = call i64 @claim(ptr %p, i64 %t)
  %g = lshr i64 %t, 32
  %g32 = trunc i64 %g to i32
  br label %wait
wait:
  %st = load atomic i32, ptr %stopp acquire, align 4
  %stopped = icmp ne i32 %st, 0
  br i1 %stopped, label %out, label %spin_loop
spin_loop:
  %k = phi i64 [ 0, %wait ], [ %k1, %spin_more ]
  %cur = load atomic i32, ptr %genp acquire, align 4
  %changed = icmp ne i32 %cur, %g32
  br i1 %changed, label %top, label %spin_check
spin_check:
  %k1 = add i64 %k, 1
  %spinning = icmp ult i64 %k1, %spin
  br i1 %spinning, label %spin_more, label %sleep
spin_more:
  call void @pause()
  br label %spin_loop
sleep:
  %s0 = atomicrmw add ptr %sleepp, i32 1 seq_cst, align 4
  %cur2 = load atomic i32, ptr %genp seq_cst, align 4
  %st2 = load atomic i32, ptr %stopp seq_cst, align 4
  %same2 = icmp eq i32 %cur2, %g32
  %run2 = icmp eq i32 %st2, 0
  %block = and i1 %same2, %run2
  br i1 %block, label %do_wait, label %woke
do_wait:
  %g64 = zext i32 %g32 to i64
  call void @futex(ptr %p, ptr %genp, i64 128, i64 %g64)
  br label %woke
woke:
  %s1 = atomicrmw sub ptr %sleepp, i32 1 seq_cst, align 4
  br label %wait
out:
  ret void
}

; returns the nanoseconds the calling thread spent running its own slices, and stores how many
; programs those were at offset 352
define i64 @kdsl_pool_launch(ptr %p, ptr %run, ptr %argv, i32 %gx, i32 %gy, i32 %gz, i64 %total, i64 %ns) {
entry:
  %ts = alloca [4 x i64], align 8
  %ts1 = getelementptr i8, ptr %ts, i64 16
  %genp = getelementptr i8, ptr %p, i64 64
  %sleepp = getelementptr i8, ptr %p, i64 68
  %donep = getelementptr i8, ptr %p, i64 128
  %waitp = getelementptr i8, ptr %p, i64 132
  %spinp = getelementptr i8, ptr %p, i64 @SPIN@
  %spin = load i64, ptr %spinp, align 8
  %t = load atomic i64, ptr %p seq_cst, align 8
  %g0 = lshr i64 %t, 32
  %g1 = add i64 %g0, 1
  %g = and i64 %g1, 4294967295
  %par = and i64 %g, 1
  %joff = mul i64 %par, 64
  %joff2 = add i64 %joff, 192
  %job = getelementptr i8, ptr %p, i64 %joff2
  store atomic ptr %run, ptr %job monotonic, align 8
  %argvp = getelementptr i8, ptr %job, i64 8
  store atomic ptr %argv, ptr %argvp monotonic, align 8
  %gxp = getelementptr i8, ptr %job, i64 16
  store atomic i32 %gx, ptr %gxp monotonic, align 4
  %gyp = getelementptr i8, ptr %job, i64 20
  store atomic i32 %gy, ptr %gyp monotonic, align 4
  %gzp = getelementptr i8, ptr %job, i64 24
  store atomic i32 %gz, ptr %gzp monotonic, align 4
  %totalp = getelementptr i8, ptr %job, i64 32
  store atomic i64 %total, ptr %totalp monotonic, align 8
  %nsp = getelementptr i8, ptr %job, i64 40
  store atomic i64 %ns, ptr %nsp monotonic, align 8
  store atomic i32 0, ptr %donep seq_cst, align 4
  store atomic i32 0, ptr %waitp seq_cst, align 4
  %tn = shl i64 %g, 32
  store atomic i64 %tn, ptr %p seq_cst, align 8
  %g32 = trunc i64 %g to i32
  store atomic i32 %g32, ptr %genp seq_cst, align 4
  %sl = load atomic i32, ptr %sleepp seq_cst, align 4
  %anyone = icmp ne i32 %sl, 0
  br i1 %anyone, label %wake, label %work
wake:
  call void @futex(ptr %p, ptr %genp, i64 129, i64 2147483647)
  br label %work
work:
  %cgp = getelementptr i8, ptr %p, i64 @CLOCK@
  %cg = load ptr, ptr %cgp, align 8
  %c0 = call i32 %cg(i32 1, ptr %ts)
  %mine = call i64 @claim(ptr %p, i64 %tn)
  %c1 = call i32 %cg(i32 1, ptr %ts1)
  %minep = getelementptr i8, ptr %p, i64 @MINE@
  store i64 %mine, ptr %minep, align 8
  %sec0 = load i64, ptr %ts, align 8
  %ns0p = getelementptr i8, ptr %ts, i64 8
  %nsec0 = load i64, ptr %ns0p, align 8
  %sec1 = load i64, ptr %ts1, align 8
  %ns1p = getelementptr i8, ptr %ts, i64 24
  %nsec1 = load i64, ptr %ns1p, align 8
  %dsec = sub i64 %sec1, %sec0
  %dsecns = mul i64 %dsec, 1000000000
  %dnsec = sub i64 %nsec1, %nsec0
  %own = add i64 %dsecns, %dnsec
  %ns32 = trunc i64 %ns to i32
  br label %spin_loop
spin_loop:
  %k = phi i64 [ 0, %work ], [ %k1, %spin_more ]
  %d = load atomic i32, ptr %donep acquire, align 4
  %finished = icmp eq i32 %d, %ns32
  br i1 %finished, label %out, label %spin_check
spin_check:
  %k1 = add i64 %k, 1
  %spinning = icmp ult i64 %k1, %spin
  br i1 %spinning, label %spin_more, label %sleep
spin_more:
  call void @pause()
  br label %spin_loop
sleep:
  store atomic i32 1, ptr %waitp seq_cst, align 4
  br label %sleep_loop
sleep_loop:
  %d2 = load atomic i32, ptr %donep seq_cst, align 4
  %finished2 = icmp eq i32 %d2, %ns32
  br i1 %finished2, label %out, label %do_wait
do_wait:
  %d64 = zext i32 %d2 to i64
  call void @futex(ptr %p, ptr %donep, i64 128, i64 %d64)
  br label %sleep_loop
out:
  ret i64 %own
}

define void @kdsl_pool_stop(ptr %p) {
  %genp = getelementptr i8, ptr %p, i64 64
  %stopp = getelementptr i8, ptr %p, i64 72
  store atomic i32 1, ptr %stopp seq_cst, align 4
  %g = atomicrmw add ptr %genp, i32 1 seq_cst, align 4
  call void @futex(ptr %p, ptr %genp, i64 129, i64 2147483647)
  ret void
}

DECLARE
"""


def _machine() -> str:
    m = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(m, m)


def supported() -> bool:
    """Whether this machine can run the native pool (Linux with a known futex number)."""
    return sys.platform.startswith("linux") and _machine() in _SYS_FUTEX


@functools.cache
def _functions() -> tuple[Any, Any, Any, object]:
    """Compile the pool once per process: (worker, launch, stop, engine kept alive)."""
    h = host()
    pause, declare = _PAUSE.get(_machine(), ("", ""))
    text = _IR.replace("PAUSE", pause).replace("DECLARE", declare)
    # the fields Python writes or reads: one offset each, here and in NativePool
    for name, off in (("SPIN", _SPIN), ("SYSCALL", _SYSCALL), ("FUTEX_NR", _FUTEX_NR), ("CLOCK", _CLOCK), ("MINE", _MINE)):
        text = text.replace(f"@{name}@", str(off))
    mod = llvm.parse_assembly(text)
    mod.triple = h.triple
    mod.verify()
    engine = llvm.create_mcjit_compiler(mod, h.new_tm())
    engine.finalize_object()
    names = ("kdsl_pool_worker", "kdsl_pool_launch", "kdsl_pool_stop")
    worker, launch, stop = (engine.get_function_address(n) for n in names)
    return WorkerFn(worker), LaunchFn(launch), StopFn(stop), engine


class NativePool:
    """``size`` native workers plus the calling thread; one launch at a time.

    A second thread that launches while the pool is busy runs its grid on its own
    thread instead (:meth:`run_grid` returns False): waiting would serialise the two
    launches anyway, and this way both make progress.
    """

    handoff_s = 10e-6  # launches of less estimated work run inline (kdsl.runtime.cpu.backend)

    def __init__(self, size: int, spin: int = SPIN_ITERATIONS) -> None:
        self.size = size
        self._mem = (ctypes.c_uint64 * (POOL_BYTES // 8 + 8))()
        self.address = (ctypes.addressof(self._mem) + 63) & ~63
        words = (ctypes.c_uint64 * (POOL_BYTES // 8)).from_address(self.address)
        words[_SPIN // 8] = spin
        words[_SYSCALL // 8] = ctypes.cast(ctypes.CDLL(None).syscall, ctypes.c_void_p).value or 0
        words[_FUTEX_NR // 8] = _SYS_FUTEX[_machine()]
        libc = ctypes.CDLL(None)
        words[_CLOCK // 8] = ctypes.cast(libc.clock_gettime, ctypes.c_void_p).value or 0
        self._words = words
        worker, self._launch, self._stop, _ = _functions()
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=worker, args=(self.address,), name=f"kdsl-cpu-{i}", daemon=True)
            for i in range(size)
        ]
        for t in self._threads:
            t.start()

    def run_grid(
        self, kernel: Any, argv: int, gx: int, gy: int, gz: int, total: int, slices: int
    ) -> tuple[float, int] | None:
        """Run programs ``[0, total)`` of ``kernel`` (a ``LoadedObject``: its ``kdsl_run`` at
        ``kernel.address``) in ``slices`` slices.

        Returns the seconds the calling thread spent in its own slices and how many programs
        they held (a per-program time free of the hand-off and of waiting for the workers), or
        None without running anything when another thread's launch holds the pool.
        """
        if not self._lock.acquire(blocking=False):
            return None
        try:
            own_ns = self._launch(self.address, kernel.address, argv, gx, gy, gz, total, slices)
            mine = int(self._words[_MINE // 8])
        finally:
            self._lock.release()
        return own_ns * 1e-9, mine

    def close(self, timeout: float | None = None) -> bool:
        """Stop and join the workers; False if the pool stayed busy or a worker did not finish
        within ``timeout`` seconds. Called for every pool at interpreter exit
        (:func:`kdsl.runtime.cpu.pool.close_pools`): a worker still spinning on the pool's memory
        or in its code when the interpreter frees them would crash the exit."""
        if not self._lock.acquire(timeout=-1 if timeout is None else timeout):
            return False
        try:
            self._stop(self.address)
            for t in self._threads:
                t.join(timeout)
            return not any(t.is_alive() for t in self._threads)
        finally:
            self._lock.release()
