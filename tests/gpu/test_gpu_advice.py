"""The advice proofs of tests/test_advice_proofs.py in gpu mode (`--device cuda`): each rule fires on the
model, the model with the advice applied shows the promised effect, and the values, compiled on the GPU,
are the original's. Skipped where torch sees no CUDA GPU (tests/conftest.py); a proof whose library is not
installed (moe-ops, Liger-Kernel) is skipped with the reason.

    python -m pytest -q -m gpu tests/gpu/test_gpu_advice.py      # on the GPU machine, from the repo root
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from _advice_proofs import PROOFS, Proof, ProofRuns, check_proof, missing_needs

pytestmark = [pytest.mark.gpu, pytest.mark.slow]


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest) -> Any:
    chosen = [item.callspec.params["proof"] for item in request.session.items
              if item.module is request.module and hasattr(item, "callspec")]
    cli = ProofRuns(chosen or PROOFS, device="cuda", workers=max(2, min(8, (os.cpu_count() or 2) // 2)))
    yield cli
    cli.close()


@pytest.mark.parametrize("proof", PROOFS, ids=[p.name for p in PROOFS])
def test_advice_applied_does_what_it_says_on_gpu(proof: Proof, runs: ProofRuns) -> None:
    missing = missing_needs(proof)
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    check_proof(proof, runs)
