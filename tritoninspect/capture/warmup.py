"""The one-off work of a process's first compile, done in a thread while the target is imported.

A process's first Triton compile hashes Triton's and torch's sources, starts Inductor's compile-worker pool
and, on a GPU, builds Triton's C driver helper with gcc: about a second that a plain `torch.compile` spends
inside its first compile, one step after another. None of it needs the model, so a capture starts it before
it imports the target and waits for it before the first compile: the same work, overlapped with the import
(which is mostly Python, while these jobs wait on gcc, a child process or a hash that releases the GIL).

The jobs are listed by `compat.inductor.first_compile_jobs`, which imports the modules they need in the calling
thread, so the thread imports nothing while the target's import runs (two threads importing the same circle
of modules can deadlock). A job that fails is left for the compile to redo, which reports its
own error: the thread never raises.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Warmup:
    """Jobs running in a daemon thread; `wait()` before the first compile."""

    def __init__(self, jobs: list[Callable[[], object]]) -> None:
        #: "job: error" of each job that raised. Not shown: the compile redoes that job and reports its own
        #: error; the GPU test (tests/gpu/test_gpu_compile_pool.py) checks that none failed.
        self.failures: list[str] = []
        self._thread = threading.Thread(target=self._run, args=(jobs,), name="tritoninspect-warmup", daemon=True)
        self._thread.start()

    def _run(self, jobs: list[Callable[[], object]]) -> None:
        for job in jobs:
            try:
                job()
            except Exception as exc:  # noqa: BLE001 - redone, and reported, by the compile itself
                self.failures.append(f"{getattr(job, '__name__', job)}: {type(exc).__name__}: {exc}")

    def wait(self) -> None:
        self._thread.join()


def start(*, gpu: bool) -> Warmup:
    """Start the first compile's one-off jobs for this mode (`gpu`: a real GPU; else compile-only)."""
    from tritoninspect.capture import compat

    return Warmup(compat.inductor.first_compile_jobs(gpu=gpu))
