"""The run: from a parsed source to a report.

- `acquire`: `acquire(source, options)`, the one way a command gets its report: a saved report
  read, a trace's read (`traces`), or the model captured (`pipeline`, `pipeline_export`).
- `pipeline`: spec -> mode -> target -> capture -> analyse -> report; the Python API.
- `pipeline_export`: the same for `tritoninspect export` (torch.export, AOTInductor), with
  `aoti`: AOTInductor built, loaded and run in a child process (`children/aoti_child.py`).
- `traces`: TORCH_TRACE logs -> reports, without torch.
- `stdout_guard`: what the user's code prints goes to stderr, marked: stdout carries the report.
- `exits`: the user's `os._exit()` raised as their code failing (the CLI's capture, `diff`'s sides).
"""
