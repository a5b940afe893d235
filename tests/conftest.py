"""Shared pytest setup: `gpu`-marked tests skip themselves where torch sees no CUDA GPU.

Assertion helpers shared by the sample tests live in tests/_expect.py (this directory is
put on sys.path by pytest because of this conftest, so `import _expect` works from tests/gpu/ too).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The checkout itself, so a plain `pytest` works where tritoninspect is not installed (the GPU machine).
_REPO = str(Path(__file__).resolve().parents[1])
if _REPO not in sys.path:
    sys.path.insert(0, _REPO)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_items:
        return  # no need to import torch for a run without GPU tests
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (torch.cuda.is_available() is False)")
    for item in gpu_items:
        item.add_marker(skip)
