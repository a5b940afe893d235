"""The run: from a parsed source to a report, and what a capture says as it goes.

- `acquire`: `acquire(source, options)`, the one way a command gets its report: a saved report
  read, a trace's read (`traces`), or the model captured (`pipeline`, `pipeline_export`).
- `pipeline`: spec -> mode -> target -> capture -> analyse -> report; the Python API.
- `pipeline_export`: the same for `tritoninspect export` (torch.export, AOTInductor).
- `traces`: TORCH_TRACE logs -> reports, without torch.
"""
