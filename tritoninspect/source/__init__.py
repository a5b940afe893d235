"""What the user points at, and loading it: a command's TARGET parsed once, a model imported.

- `parse`: `parse_source(text)`, the kind of the TARGET decided once (a model spec, a saved
  report, a TORCH_TRACE log or folder), torch-free.
- `spec`: a model spec (`model.py:Net`, `package.module:Net`) as a `TargetSpec`, torch-free.
- `target`: a `TargetSpec` imported: the module, the model instance, its example inputs.
- `inputs`: `--inputs` ("4x128:float16,4x128") parsed, made and described back.
"""
