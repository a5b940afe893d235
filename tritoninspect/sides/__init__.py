"""The two sides of `tritoninspect diff`: a saved report, or a target captured in a fresh child process.

- `parent.py` (in the `diff` command's process): reads a saved side, or starts the child
  for a target and turns its answer back into a `SideResult` or the child's typed error;
  `--save`; `build_diff`.
- `child.py` (`python -m tritoninspect.sides.child REQUEST OUT`): captures one target
  through the pipeline, times it with `bench.py` for `--bench`, and writes its answer.
- `bench.py`: `--bench` timings, through the pipeline's public steps.

Each target gets its own process so the two compiles share no Dynamo or Inductor state
(compile ids, the kernel side table, in-memory caches, imported modules). The parent
writes the request as JSON, `{"target", "options": CaptureOptions, "bench", "debug"}`;
the child answers `{"report": <report>, "bench": <SideBench> | null, "bench_method"}`,
or `{"error": errors.error_to_dict(...)}`, so `diff` exits with the code `graph` would.
"""
