"""The data model, at the bottom of the package: what every other layer reads and writes.

- `report` (with `report_kernel`, `report_breaks`, `report_export`): the frozen, versioned
  report every renderer and diff reads; `diff_report`: two reports compared.
- `records`: the plain records a capture makes from live torch objects (`Capture`), and
  `export_records` for `tritoninspect export`. Where a record and the report carry the same
  facts they are one class: the report's `Kernel`, `Graph`, `Recompile` and `GraphBreak`
  extend the records `KernelRecord`, `GraphRecord`, `RecompileRecord` and `DynamoBreak` (each
  defined beside its extension), and `Failure`, `Resources`, `RecompileLimit`, `DecompiledFrame`
  are recorded as they are.
- `schema`: the JSON Schemas generated from these dataclasses, and validation; `_json`: JSON I/O.
- `errors`: the exception hierarchy, the exit codes, and an error's JSON form.

Imports nothing of tritoninspect outside this package, and no torch (tests/test_layers.py).
"""

#: The tool's version, as every document it writes says it (`meta.tool_version`); the
#: package's `tritoninspect.__version__` and its metadata (pyproject.toml) are this one.
__version__ = "0.1.0"
