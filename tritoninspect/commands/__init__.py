"""The commands, one module each (`graph`, `diff`, `breaks`, `check`, `export`), registered by `cli.py`.

What they share, one module each, private to this package: `_options.py` (option aliases
and enums), `_edge.py` (the one error path: `error:` lines, exit codes, the `--json`
envelope), `_capture.py` (the report a command works on, and the capture in this process),
`_outputs.py` (`-o`, `--dump`, `--trace` checked before a compile), `_progress.py` (progress
on stderr), `_traces.py` (a trace's ranks), `_help.py` (`--help`). They write through
`render.emit.emit`. A command imports no other command; torch and the capture layer are
imported inside commands only.
"""
