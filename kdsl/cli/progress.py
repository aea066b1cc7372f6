"""A one-line progress display on stderr for steps that take more than a second.

Nothing is printed for a step that finishes within ``delay`` seconds. After
that, a background thread repaints ``label: 3.2s (kernel_name)`` in place every
quarter second, so a long first-time compilation shows up while it happens;
the line is completed with the total time when the step ends.
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import TextIO


class Progress:
    def __init__(self, label: str, delay: float = 1.0, stream: TextIO | None = None) -> None:
        self.label = label
        self.delay = delay
        self.stream = stream if stream is not None else sys.stderr
        self.status = ""
        self.shown = False
        self._start = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def update(self, status: str) -> None:
        """What is happening now (e.g. the kernel being launched or compiled)."""
        self.status = status

    def _paint(self, final: bool = False) -> None:
        elapsed = time.perf_counter() - self._start
        tail = "done" if final else (self.status or "...")
        self.stream.write(f"\r\x1b[K{self.label}: {elapsed:.1f}s ({tail})" + ("\n" if final else ""))
        self.stream.flush()
        self.shown = True

    def _run(self) -> None:
        if self._stop.wait(self.delay):
            return
        while not self._stop.is_set():
            self._paint()
            self._stop.wait(0.25)

    def __enter__(self) -> Progress:
        self._start = time.perf_counter()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.shown:
            self._paint(final=True)
