"""samples/export_dynamic.py with the row width marked as a named (strictly dynamic) Dim.

The kernel takes the width as a tl.constexpr, so torch specialises it and export fails with a
constraint violation (pytorch/pytorch#137024). For tests/test_export.py: `tritoninspect export
--dynamic` should fail at stage export with the `constexpr_specialises_dynamic_dim` finding
naming row_scale_kernel's N_COLS.
"""
import os
import sys

from torch.export import Dim

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "samples"))
from export_dynamic import Net, example_inputs  # noqa: E402,F401


def export_dynamic_shapes():
    return ({0: Dim("rows"), 1: Dim("cols")},)
