"""The commands, one module each (`graph`, `diff`, `breaks`, `check`), registered by `cli.py`.

They share `_options.py` (option aliases and enums) and `_edge.py` (the one error path,
the capture step, saved reports), and write through `render.emit.emit`. A command
imports no other command; torch and the capture layer are imported inside commands only.
"""
