"""`--debug` lets torch's own log lines (TORCH_LOGS) through to stderr; without it they stay off.

Found by the newcomer pass (h20): the README said torch's log lines are kept off stderr "unless
`--debug`", but `TORCH_LOGS=graph_breaks ... --debug` printed none (the capture never got the flag).
"""

from __future__ import annotations

import pytest
from _expect import cli_env, run_cli


@pytest.mark.slow
def test_torch_logs_reach_stderr_with_debug_only() -> None:
    env = cli_env(TORCH_LOGS="graph_breaks")
    args = ["breaks", "samples/graph_break.py:Net", "-q"]
    quiet, debug = run_cli(args, env=env), run_cli([*args, "--debug"], env=env)
    assert quiet.returncode == debug.returncode == 0, quiet.stderr + debug.stderr
    assert "[__graph_breaks]" not in quiet.stderr
    assert "[__graph_breaks]" in debug.stderr
    assert "Kernels that ran eagerly (1)" in quiet.stdout and "Kernels that ran eagerly (1)" in debug.stdout


@pytest.mark.slow
def test_export_lets_torch_logs_through_with_debug_only() -> None:
    env = cli_env(TORCH_LOGS="dynamic")
    args = ["export", "samples/export_dynamic.py:Net", "--dynamic", "--stage", "export", "-q"]
    quiet, debug = run_cli(args, env=env), run_cli([*args, "--debug"], env=env)
    assert quiet.returncode == debug.returncode == 0, quiet.stderr + debug.stderr
    assert "create_symbol" not in quiet.stderr  # symbolic_shapes' line for the dynamic dimension
    assert "create_symbol" in debug.stderr
