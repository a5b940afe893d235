"""An abort inside Triton's interpreter during a capture prints the kernel and the launching line
(tritoninspect/capture/crash.py)."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import pytest

from _expect import REPO
from tritoninspect.capture.crash import fatal_signal_stacks

#: A kernel that stores far outside its tensor: Triton's interpreter writes the raw address and the
#: process dies of a signal, in C, where no Python exception can be raised.
PROGRAM = textwrap.dedent(
    """
    import os
    os.environ["TRITON_INTERPRET"] = "1"
    import torch, triton, triton.language as tl
    from tritoninspect.capture.crash import fatal_signal_stacks

    @triton.jit
    def far_store_kernel(out_ptr):
        tl.store(out_ptr + (1 << 44), 1.0)  # FAR-STORE

    def forward(out):
        far_store_kernel[(1,)](out)  # LAUNCH

    with fatal_signal_stacks():
        forward(torch.zeros(4))
    """
)


def test_a_stream_without_a_file_descriptor_is_left_alone() -> None:
    import faulthandler

    was = faulthandler.is_enabled()
    with fatal_signal_stacks(io.StringIO()) as on:
        assert on == was
    assert faulthandler.is_enabled() == was


@pytest.mark.slow
def test_an_interpreter_crash_names_the_kernel_and_the_launch(tmp_path) -> None:
    script = tmp_path / "crash.py"
    script.write_text(PROGRAM)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode < 0, proc.stderr[-2000:]  # killed by a signal
    lines = PROGRAM.splitlines()
    store = next(i for i, line in enumerate(lines, 1) if "FAR-STORE" in line)
    launch = next(i for i, line in enumerate(lines, 1) if "# LAUNCH" in line)
    assert "Fatal Python error" in proc.stderr
    assert f'File "{script}", line {store} in far_store_kernel' in proc.stderr
    assert f'File "{script}", line {launch} in forward' in proc.stderr
