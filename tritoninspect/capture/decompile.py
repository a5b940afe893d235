"""`--decompile`: each frame Dynamo transforms, decompiled back to Python by depyf.

The transformed code shows what Dynamo made of a frame: the calls to the
compiled graphs (`__compiled_fn_N`) and, around each graph break, the calls to
the resume functions (`__resume_at_N`) that continue after it.

depyf is imported only here, and only when asked for: it is a declared
dependency, but a machine without it must still run everything else.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from types import CodeType, ModuleType

from tritoninspect.capture import compat
from tritoninspect.model.records import Capture, DecompiledFrame
from tritoninspect.model.errors import EnvironmentProblem


def require_depyf() -> ModuleType:
    """depyf, or an `EnvironmentProblem` saying how to get it."""
    try:
        import depyf
    except ImportError as exc:
        raise EnvironmentProblem(
            f"--decompile needs depyf, which is not importable here ({exc})", hint="pip install depyf"
        ) from exc
    return depyf


class Decompiler:
    """Records the decompiled transformed code of every frame Dynamo compiles.

    `dump_dir`: also run depyf's own `prepare_debug` dump (full code per
    function, transformed code, compiled graphs) into that directory.
    """

    def __init__(self, dump_dir: str | None = None) -> None:
        self.depyf = require_depyf()
        self.dump_dir = dump_dir
        self._dynamo_code: CodeType | None = None

    @contextlib.contextmanager
    def recording(self, capture: Capture) -> Iterator[None]:
        """Install the bytecode hooks (and depyf's dump) for the block; always remove them."""
        first = compat.dynamo.register_bytecode_hook(lambda code, new_code: self._on_bytecode(capture, code, new_code))
        try:
            with warnings.catch_warnings():
                # prepare_debug warns that every branch should run; the report says what ran.
                warnings.filterwarnings("ignore", message=".*debug `torch.compile`")
                with self._depyf_dump():
                    yield
        finally:
            first.remove()

    @contextlib.contextmanager
    def _depyf_dump(self) -> Iterator[None]:
        if self.dump_dir is None:
            yield
            return
        with self.depyf.prepare_debug(self.dump_dir):
            # prepare_debug's own hook swaps in its decompiled-and-recompiled copy
            # of each frame. Hooks run in order, so one registered after it puts
            # Dynamo's code back: the dump is written, and what runs (and the
            # frames eager launches are attributed by) stays Dynamo's.
            last = compat.dynamo.register_bytecode_hook(self._restore_dynamo_code)
            try:
                yield
            finally:
                last.remove()

    def _on_bytecode(self, capture: Capture, code: CodeType, new_code: CodeType) -> None:
        self._dynamo_code = new_code
        try:
            source = self.depyf.decompile(new_code)
        except Exception as exc:  # noqa: BLE001 - one undecompilable frame must not stop the capture
            source = f"# depyf could not decompile this frame: {type(exc).__name__}: {exc}\n"
        capture.decompiled.append(
            DecompiledFrame(compat.dynamo.current_compile_id() or "?", code.co_name, code.co_filename,
                             code.co_firstlineno, source)
        )
        return None  # keep Dynamo's code

    def _restore_dynamo_code(self, code: CodeType, new_code: CodeType) -> CodeType | None:
        return self._dynamo_code
