"""The torch and Triton versions in use (the report's `meta` block)."""

from __future__ import annotations

import torch
import triton


def torch_version() -> str:
    return torch.__version__


def triton_version() -> str:
    return triton.__version__
