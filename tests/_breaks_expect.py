"""What `tritoninspect breaks` should report for each break sample, and a checker.

Shared by the fixture tests (tests/test_breaks.py), the live compile-only runs
(tests/test_breaks_e2e.py) and the GPU runs (tests/gpu/test_gpu_breaks.py).
Expectations come from each sample's docstring; line numbers are read from the
sample's source. Exact record and graph counts are torch 2.13's (CPU); the GPU
machine runs torch 2.11, so `check_breaks(..., exact=False)` checks the rest only.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _expect import SAMPLES_DIR, line_of
from tritoninspect.analyse.breaks import RUNTIME_FOLLOW_ON


@dataclass(frozen=True)
class BreakExpect:
    """One break sample's docstring, as data."""

    #: The kernel the breaks concern, and how it entered torch.compile.
    kernel: str
    entries: tuple[str, ...]
    #: The statement (as it starts in the source) every break is reported at, and its function.
    statement: str | None = None
    function: str | None = None
    #: Substrings of the first break's headline and hint, and its graph-break id.
    headline: str | None = None
    hint: str | None = None
    gb_id: str | None = None
    #: How `kernel` is tied to the breaks (a substring of kernel_relation).
    relation: str | None = None
    #: Some break skipped a whole frame / could not resume; some happened inside triton.
    frame_skipped: bool = False
    skipped_rest: bool = False
    in_triton: bool = False
    #: Exact counts on torch 2.13 (None: not checked).
    records: int | None = None
    graphs: int | None = None
    recompiles: int = 0
    #: Compile with dynamic=True (`--dynamic`).
    dynamic: bool = False


EXPECTED: dict[str, BreakExpect] = {
    "break_heuristics_dynamic": BreakExpect(
        kernel="masked_scale_kernel", entries=("eager",), statement="masked_scale_kernel[grid](x, out, n)",
        function="forward", headline="@triton.heuristics must return constant values", hint="mark_static",
        gb_id="GB0361", relation="launched eagerly from this line", skipped_rest=True, in_triton=True,
        records=3, graphs=1, dynamic=True,
    ),
    "break_pre_hook": BreakExpect(
        kernel="scale_kernel", entries=("eager",), statement="scale_kernel[grid](x, out, n)", function="scaled",
        headline="pre_hook and post_hook are not supported", hint="reset_to_zero", gb_id="GB0361",
        relation="launched eagerly from this line", frame_skipped=True, in_triton=True, records=4, graphs=2,
    ),
    "break_item_grid": BreakExpect(
        kernel="add_kernel", entries=("hop",), statement="n = int(count.item())", function="forward",
        headline="Tensor.item()", hint="capture_scalar_outputs", gb_id="GB0124", relation="next to the break",
        records=1, graphs=3, recompiles=1,
    ),
    "break_disabled_dispatch": BreakExpect(
        kernel="gelu_kernel", entries=("eager",), statement="y = dispatch(h)", function="forward",
        headline="torch.compiler.disable", hint="triton_op", gb_id="GB0098",
        relation="launched eagerly from this line", records=1, graphs=2,
    ),
    "break_num_ctas": BreakExpect(
        kernel="add_kernel", entries=("eager",),
        statement="add_kernel[(triton.cdiv(n, 16),)](x, y, out, n, BLOCK=16, num_ctas=1)", function="forward",
        headline="Passing num_ctas directly", hint="triton.Config", gb_id="GB0361",
        relation="launched eagerly from this line", frame_skipped=True, in_triton=True, records=3, graphs=0,
    ),
    "recompile_constexpr": BreakExpect(kernel="one_block_kernel", entries=("hop",), records=0, graphs=3, recompiles=2),
}


def sample_path(name: str) -> Path:
    return SAMPLES_DIR / f"{name}.py"


def literal_after(name: str, marker: str) -> tuple[int, ...]:
    """The tuple literal following `marker` in the sample's source, e.g. the sizes in
    `for n in (40, 100, 200)`."""
    text = sample_path(name).read_text()
    match = re.search(re.escape(marker) + r"\s*(\([^)]*\))", text)
    assert match, f"no {marker!r} in {name}"
    return tuple(ast.literal_eval(match[1]))


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k["name"]: k for k in report["kernels"]}


def dynamo_ids(report: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys(g["compile_id"] for g in report["graphs"] if g["stage"] == "dynamo"))


def check_breaks(name: str, report: dict[str, Any], *, exact: bool = True) -> None:
    """Everything the sample's docstring promises about its breaks (a report as JSON data)."""
    exp, src = EXPECTED[name], sample_path(name)
    breaks = report["graph_breaks"]
    if exact and exp.records is not None:
        assert len(breaks) == exp.records, [b["headline"] for b in breaks]
        assert len(dynamo_ids(report)) == exp.graphs
        assert len(report["recompiles"]) == exp.recompiles
    kernel = by_name(report)[exp.kernel]
    assert kernel["entries"] == list(exp.entries)
    if exp.statement is None:
        assert breaks == []
        return
    assert breaks, "no graph break"
    line = line_of(src, exp.statement)
    for b in breaks:
        assert Path(b["file"]).resolve() == src.resolve(), b["file"]
        assert b["line"] == line, (b["line"], line)
        assert b["user_stack"][-1].endswith(f":{line} in {exp.function}")
        assert b["kernel"] == exp.kernel, b
        assert b["context"][line - b["context_start"]].strip() == exp.statement
        assert b["hint"] and b["hint_source"], b["headline"]
    first = breaks[0]
    assert exp.headline in first["headline"]
    assert exp.hint in first["hint"]
    assert first["gb_id"] == exp.gb_id and first["doc_url"].endswith(f"gb{exp.gb_id[2:]}.html")
    assert exp.relation in first["kernel_relation"]
    # On a GPU, Dynamo also compiles the frames of Triton's runtime an eager launch runs through,
    # and breaks (or skips frames) there: follow-ons, said so by their hint, not the sample's own.
    own = [b for b in breaks if b["hint"] != RUNTIME_FOLLOW_ON.hint]
    assert any(b["frame_skipped"] for b in own) is exp.frame_skipped
    assert any(b["skipped_rest"] for b in own) is exp.skipped_rest
    assert any("triton/runtime/jit.py" in (b["library_frame"] or "") for b in breaks) is exp.in_triton
    check_eager(exp, kernel, breaks)


def check_eager(exp: BreakExpect, kernel: dict[str, Any], breaks: list[dict[str, Any]]) -> None:
    """An eager kernel ran outside every graph, and the breaks that made it so name it."""
    if "eager" not in exp.entries:
        assert all(exp.kernel not in b["eager_kernels"] for b in breaks)
        return
    runtime = [o for o in kernel["occurrences"] if o["stage"] == "runtime"]
    assert runtime and all(o["entry"] == "eager" and o["compile_id"] is None for o in runtime)
    assert any(exp.kernel in b["eager_kernels"] for b in breaks)
    for b in breaks:
        if b["frame_skipped"] or b["skipped_rest"]:
            assert b["eager_kernels"] == [exp.kernel], b


def check_item_grid_recompile(report: dict[str, Any]) -> None:
    """The resume function is specialised to the first count; the recompile makes n and the grid symbolic."""
    first = literal_after("break_item_grid", "for c in")[0]
    (r,) = report["recompiles"]
    frame = r["compile_id"].split("/")[0]
    assert r["compile_id"] == f"{frame}/1" and r["previous"] == f"{frame}/0"
    assert f"== {first}" in r["guard"]
    changes = {(c["kernel"], c["kind"], c["name"]): c for c in r["changes"]}
    n = changes[("add_kernel", "scalar", "n")]
    assert n["before"] == str(first) and n["guarded"] is True
    assert re.fullmatch(r"[su]\d+", n["after"]), n
    grid = changes[("add_kernel", "grid", "grid")]
    assert grid["before"] == f"({-(-first // 16)}, 1, 1)" and n["after"] in grid["after"]
    assert "symbolic" in r["hint"]


def check_constexpr_recompiles(report: dict[str, Any]) -> None:
    """Each new size changes constexpr BLOCK = next_power_of_2(n)."""
    sizes = literal_after("recompile_constexpr", "for n in")
    blocks = [1 << (n - 1).bit_length() for n in sizes]
    recompiles = report["recompiles"]
    assert len(recompiles) == len(sizes) - 1
    for i, (r, before, after) in enumerate(zip(recompiles, blocks, blocks[1:])):
        block = [c for c in r["changes"] if c["kind"] == "constexpr" and c["name"] == "BLOCK"]
        assert [(c["before"], c["after"]) for c in block] == [(str(before), str(after))]
        # The hint follows the guard that failed: x's static size (automatic dynamic; always the first),
        # else BLOCK's own guard (`next_power_of_2(s77) == 128`).
        size = "size mismatch" in r["guard"]
        assert size or i > 0
        assert ("automatic dynamic" if size else "constexpr BLOCK") in r["hint"]
    first = recompiles[0]
    assert f"expected {sizes[0]}, actual {sizes[1]}" in first["guard"]
    n = next(c for c in first["changes"] if c["name"] == "n")
    assert n["before"] == str(sizes[0]) and n["guarded"] is True
