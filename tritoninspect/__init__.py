"""tritoninspect: see what torch.compile did with your user-defined Triton kernels.

Python API (for a kernel library's tests)::

    from tritoninspect import inspect_module, check_report

    report = inspect_module(Net(), (x, y), stage="dynamo")   # a Report
    assert check_report(report, no_breaks=True, entries={"add_kernel": "hop"}) == []

Names are imported on first use, so `import tritoninspect` (and `tritoninspect
--help`) does not import torch.
"""

from __future__ import annotations

from typing import Any

from tritoninspect.model import __version__, notebook


def _notebook_page(document: Any) -> str:
    # Reports show themselves in Jupyter through the model's slot (model/notebook.py says why);
    # render/ is imported when a notebook first shows one, not when tritoninspect is.
    from tritoninspect.render.notebook import notebook_html

    return notebook_html(document)


notebook.register_page(_notebook_page)

#: Public name -> the module that defines it, imported on first access.
_LAZY = {
    "inspect_module": "tritoninspect.run.pipeline",
    "inspect_target": "tritoninspect.run.pipeline",
    "check_report": "tritoninspect.analyse.checks",
    "Report": "tritoninspect.model.report",
}

__all__ = ["Report", "__version__", "check_report", "inspect_module", "inspect_target"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tritoninspect' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
