"""Every advice rule proved by applying it, in compile-only mode (tier c): the rule fires on a model, the
model changed as the advice says compiles to what the advice promised (the clone, break or extern call is
gone), and its values are the original's. The proofs live in tests/_advice_proofs.py; the same run on a GPU
in tests/gpu/test_gpu_advice.py."""

from __future__ import annotations

from typing import Any

import pytest

from _advice_proofs import PROOFS, Proof, ProofRuns, check_proof, missing_needs

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest) -> Any:
    # Only the targets of the proofs this session runs: one process each, two at a time.
    chosen = [item.callspec.params["proof"] for item in request.session.items
              if item.module is request.module and hasattr(item, "callspec")]
    cli = ProofRuns(chosen or PROOFS, device="cpu", workers=2)
    yield cli
    cli.close()


@pytest.mark.parametrize("proof", PROOFS, ids=[p.name for p in PROOFS])
def test_advice_applied_does_what_it_says(proof: Proof, runs: ProofRuns) -> None:
    missing = missing_needs(proof)
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (pip install --no-deps {' '.join(missing)})")
    check_proof(proof, runs)


def test_a_library_model_fits_45_lines_in_a_120_column_terminal(tmp_path: Any) -> None:
    """The CLI as a user at a 120-column terminal sees it (a pseudo-terminal, COLUMNS=120): moe-ops' four
    kernels in its own custom ops give one finding, and the default view fits 45 lines."""
    import os
    import pty
    import re
    import subprocess
    import sys

    from _advice_proofs import REPO

    if missing_needs(Proof("moe", "", "", lambda run: None, needs=("moe-ops",))):
        pytest.skip("needs moe-ops (pip install --no-deps moe-ops==0.1.0)")
    primary, secondary = pty.openpty()
    # The repository first, then what the caller put on the path (a `pip install --target` of moe-ops, say).
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, COLUMNS="120", LINES="50", PYTHONPATH=path)
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "tritoninspect", "graph", "tests/assets/advice/moe_ops_layer.py",
                             "--device", "cpu", "-q"], cwd=REPO, env=env, stdout=secondary, stderr=subprocess.PIPE)
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    _, err = proc.communicate(timeout=1500)
    os.close(primary)
    assert proc.returncode == 0, err.decode()[-3000:]
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode()).replace("\r", "")
    lines = text.rstrip("\n").split("\n")
    assert "Findings, by impact (1)" in text and "moe-ops 0.1.0" in text
    assert max(len(line) for line in lines) <= 120
    assert len(lines) <= 45, text
