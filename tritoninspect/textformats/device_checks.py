"""Source lines that ask a tensor whether it is on a CUDA device, as kernel libraries write them."""

from __future__ import annotations

import re

# `x.device.type == "cuda"`, `x.device != torch.device("cuda")`, `x.device.type in ("cuda", "xpu")`,
# `"cuda" == x.device.type`, `x.device.type == 'cuda:0'`: a device (or its type) compared with cuda.
_DEVICE = r"\.device(?:\.type)?"
_CUDA = r"""(?:torch\.device\(\s*)?["']cuda(?::\d+)?["']"""
_CHECKS = (
    re.compile(rf"{_DEVICE}\s*(?:==|!=|\bis\b(?:\s+not\b)?)\s*{_CUDA}"),
    re.compile(rf"{_CUDA}\s*\)?\s*(?:==|!=)\s*[\w.\[\]()]*{_DEVICE}\b"),
    re.compile(rf"{_DEVICE}\s+(?:not\s+)?in\s*[\(\[{{][^)\]}}]*{_CUDA}"),
)


def compares_device_with_cuda(line: str) -> bool:
    """The line compares a tensor's device (or its type) with "cuda"."""
    code = line.split("#", 1)[0]
    return any(check.search(code) for check in _CHECKS)
