"""Work done in child processes: diff's sides (both halves), `--bench`, and AOTInductor's child.

A diff side (`tritoninspect diff A B ...`):

- `side.py` (in the `diff` command's process): a saved report or a trace's as it is
  (`run.acquire`), or a target captured in a fresh child, its answer turned back into a
  `SideResult` or the child's typed error; `--save`; `build_diff`.
- `side_child.py` (`python -m tritoninspect.children.side_child REQUEST OUT`): captures one
  target through `run.acquire`, times it with `bench.py` for `--bench`, and writes its answer.
- `bench.py`: `--bench` timings, through the pipeline's public steps.

Each target gets its own process so the two compiles share no Dynamo or Inductor state
(compile ids, the kernel side table, in-memory caches, imported modules). The parent
writes the request as JSON, `{"target", "options": CaptureOptions, "bench", "debug"}`;
the child answers `{"report": <report>, "bench": <SideBench> | null, "bench_method"}`,
or `{"error": errors.error_to_dict(...)}`, so `diff` exits with the code `graph` would.

AOTInductor (`tritoninspect export`): `aoti_child.py` builds, loads and runs the package for
`run/aoti.py` (the export route's half, which starts it and reads its answer back), so that
a native crash there is a finding of the report, not the end of it.
"""
