"""`tritoninspect breaks` / `check` end to end (tier c, slow), in compile-only mode.

Live runs of every break sample through the Python API (`inspect_module`, Dynamo only, in
this process: cheap), checked against the same expectations as the saved captures
(tests/_breaks_expect.py), so the fixtures cannot drift from what torch does; a module
defined in this file (the API's documented use in a kernel library's tests); and three CLI
runs in fresh processes: `breaks --decompile --dump`, and `check` failing and passing.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from _breaks_expect import EXPECTED, check_breaks, check_constexpr_recompiles, check_item_grid_recompile, sample_path
from _expect import REPO, CliRuns, explain, line_of
from tritoninspect.model.errors import ExitCode

pytestmark = pytest.mark.slow

CPU = ["--device", "cpu"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    out = tmp_path_factory.mktemp("breaks")
    cli = CliRuns(workers=2)
    cli.submit("breaks --decompile", ["breaks", "samples/break_pre_hook.py:Net", "--decompile", "--dump",
                                      str(out / "dump"), *CPU])
    cli.submit("check fails", ["check", "samples/break_disabled_dispatch.py:Net", "--no-breaks", "--max-graphs", "1",
                               "--entry", "gelu_kernel=hop", *CPU])
    cli.submit("check holds", ["check", "samples/add_raw.py:Net", "--no-breaks", "--max-graphs", "1",
                               "--entry", "add_kernel=hop", "--no-fallback", "--json", *CPU])
    cli.submit("check holds text", ["check", "samples/add_raw.py:Net", "--no-breaks", "-q", *CPU])
    cli.out = out  # type: ignore[attr-defined]
    yield cli
    cli.close()


def _import(name: str) -> Any:
    module_name = f"_tritoninspect_test_break_{name}"
    spec = importlib.util.spec_from_file_location(module_name, sample_path(name))
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[module_name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _input_sets(value: Any) -> list[tuple[Any, ...]]:
    if isinstance(value, list):
        return [tuple(v) for v in value]
    return [tuple(value) if isinstance(value, tuple) else (value,)]


@pytest.fixture(scope="module")
def live() -> dict[str, dict[str, Any]]:
    """Each break sample captured in this process with the public API (compile-only, Dynamo only)."""
    from tritoninspect import inspect_module

    reports = {}
    for name, exp in EXPECTED.items():
        module = _import(name)  # imported before compile-only mode: the API's documented order
        report = inspect_module(module.Net(), *_input_sets(module.example_inputs()), device="cpu", stage="dynamo",
                                dynamic=exp.dynamic, name=f"samples/{name}.py:Net")
        assert [d for d in report.diagnostics if d.severity != "note"] == [], report.diagnostics
        reports[name] = json.loads(report.to_json())
    return reports


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_live_sample_breaks(live: dict[str, dict[str, Any]], name: str) -> None:
    check_breaks(name, live[name])


def test_live_recompiles(live: dict[str, dict[str, Any]]) -> None:
    check_item_grid_recompile(live["break_item_grid"])
    check_constexpr_recompiles(live["recompile_constexpr"])


def test_heuristics_do_not_break_without_dynamic() -> None:
    from tritoninspect import check_report, inspect_module

    module = _import("break_heuristics_dynamic")
    report = inspect_module(module.Net(), (module.example_inputs(),), device="cpu", stage="dynamo")
    assert check_report(report, no_breaks=True, entries={"masked_scale_kernel": "hop"}) == []


def test_dynamo_builtin_warnings_stay_in_the_report() -> None:
    """Dynamo warns for each untraceable builtin it breaks on (on a GPU, time.time inside Triton's
    autotuner, many times): the break is in the report, the warning does not reach the user."""
    import warnings
    import zlib

    from tritoninspect import inspect_module

    def crc(x: Any) -> Any:
        return x + zlib.crc32(b"tritoninspect")  # a builtin no other test calls: warn_once has not seen it

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        report = inspect_module(crc, (torch.randn(4),), device="cpu", stage="dynamo")
    assert [b.headline for b in report.graph_breaks] == ["Attempted to call function marked as skipped"]
    assert "zlib.crc32" in report.graph_breaks[0].reason
    assert not [w for w in seen if "does not know how to trace" in str(w.message)]


# --- the API on a module defined in a test file ---------------------------------------------------

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def _launch(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    double_kernel[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), BLOCK=16)
    return out


class TracedNet(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _launch(x.sin()).cos()


@torch.compiler.disable
def _disabled_launch(x: torch.Tensor) -> torch.Tensor:
    return _launch(x)


class DisabledNet(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _disabled_launch(x.sin()).cos()


def test_api_on_a_module_defined_in_a_test_file() -> None:
    """Kernels defined here were imported before compile-only mode: plain JITFunctions still trace."""
    from tritoninspect import check_report, inspect_module

    x = torch.randn(64)
    traced = inspect_module(TracedNet(), (x,), device="cpu", stage="dynamo")
    assert traced.meta.target == "TracedNet"
    assert check_report(traced, no_breaks=True, max_graphs=1, entries={"double_kernel": "hop"}) == []

    disabled = inspect_module(DisabledNet(), (x,), device="cpu", stage="dynamo")
    failures = check_report(disabled, no_breaks=True, entries={"double_kernel": "hop"})
    assert [f.split(":")[0] for f in failures] == ["--no-breaks", "--entry double_kernel=hop"]
    (b,) = disabled.graph_breaks
    assert (b.gb_id, b.kernel, b.eager_kernels) == ("GB0098", "double_kernel", ("double_kernel",))
    assert b.file == __file__ and b.context[b.line - b.context_start].strip().startswith("return _disabled_launch(")


def test_api_decompile() -> None:
    from tritoninspect import inspect_module

    report = inspect_module(DisabledNet(), (torch.randn(64),), device="cpu", stage="dynamo", decompile=True)
    functions = [f.function for f in report.decompiled]
    assert functions[0] == "forward" and any(f.startswith("torch_dynamo_resume_in_forward") for f in functions)
    assert "_disabled_launch(" in report.decompiled[0].source
    assert "__resume_at_" in report.decompiled[0].source


# --- the CLI ----------------------------------------------------------------------------------------


def test_cli_breaks_decompile_and_dump(runs: Any) -> None:
    proc = runs.get("breaks --decompile")
    assert proc.returncode == 0, explain(proc)
    out = proc.stdout
    line = next(n for n, t in enumerate(sample_path("break_pre_hook").read_text().splitlines(), 1)
                if t.strip() == "scale_kernel[grid](x, out, n)")
    assert "1. triton kernel unsupported feature: pre_hook and post_hook are not supported" in out
    assert f"at samples/break_pre_hook.py:{line} in scaled" in out
    assert "kernel: scale_kernel (launched eagerly from this line)" in out
    assert "frame skipped" in out and "hint: Dynamo cannot run a Config(pre_hook=...)" in out
    assert "Decompiled frames" in out and "__compiled_fn_" in out
    dump = runs.out / "dump"
    report = json.loads((dump / "report.json").read_text())
    assert report["decompiled"] and report["graph_breaks"][0]["kernel"] == "scale_kernel"
    depyf = sorted(p.name for p in dump.iterdir() if p.name.startswith("depyf_"))
    assert any(n.startswith("depyf_full_code_for_forward") for n in depyf), depyf
    assert "hint: " in (dump / "graph_breaks.txt").read_text()


def test_cli_check_fails_with_one_line_per_condition(runs: Any) -> None:
    proc = runs.get("check fails")
    assert proc.returncode == ExitCode.FINDINGS, explain(proc)
    lines = proc.stdout.splitlines()
    labels = [ln.split(":")[0] for ln in lines]
    assert labels == ["FAIL --no-breaks", "FAIL --max-graphs 1", "FAIL --entry gelu_kernel=hop"]
    assert lines[2] == "FAIL --entry gelu_kernel=hop: gelu_kernel entered as eager"
    # The break's file as the user named the target (relative to the folder `check` ran in), not absolute.
    assert "] samples/break_disabled_dispatch.py:" in lines[0] and str(REPO) not in proc.stdout, lines[0]


def test_cli_check_holds(runs: Any) -> None:
    proc = runs.get("check holds")
    assert proc.returncode == ExitCode.OK, explain(proc)
    data = json.loads(proc.stdout)
    assert data["ok"] is True and data["failures"] == []
    assert data["conditions"] == ["--no-breaks", "--max-graphs 1", "--entry add_kernel=hop", "--no-fallback",
                                  "no error finding"]
    assert data["mode"] == "compile-only"


def test_cli_check_holds_and_says_the_mode_it_held_in(runs: Any) -> None:
    """A pass in compile-only mode read like a GPU result: the ok line did not say which mode made it."""
    proc = runs.get("check holds text")
    assert proc.returncode == ExitCode.OK, explain(proc)
    assert proc.stdout == ("ok: 2 conditions hold for samples/add_raw.py:Net (--no-breaks, no error finding); "
                           "mode: compile-only (CPU, kernels in Triton's interpreter: no GPU behaviour checked)\n")


def _asset(name: str) -> tuple[Path, Any]:
    """tests/assets/<name>.py, imported under a private module name."""
    path = Path(__file__).parent / "assets" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_tritoninspect_test_{name}", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return path, module


def test_break_inside_an_installed_library() -> None:
    """tests/assets/site-packages/tikernlib breaks inside itself: your line, its frame, its kernel."""
    from tritoninspect import inspect_module

    path, module = _asset("uses_kernel_library")
    report = inspect_module(module.Net(), module.example_inputs(), device="cpu", stage="dynamo")
    assert report.graph_breaks
    lib = Path(module.tikernlib.__file__)
    lib_line = next(n for n, t in enumerate(lib.read_text().splitlines(), 1) if t.strip() == "f = float(factor.item())")
    user_line = next(n for n, t in enumerate(path.read_text().splitlines(), 1) if "tikernlib.scaled(" in t)
    for b in report.graph_breaks:
        assert (b.file, b.line) == (str(path), user_line)
        assert b.library_frame == f"{lib}:{lib_line} in scaled"
        assert b.kernel == "lib_scale_kernel" and "in the library" in (b.kernel_relation or "")
        assert b.gb_id == "GB0124"


def test_break_in_a_library_module_called_from_forward() -> None:
    """tests/assets/site-packages/tidispatchlib: the model's `forward` calls a library module's
    `forward`, which reaches a disabled dispatcher. Every break is at the model's line, with the
    library's frame kept beside it, and concerns the kernel the dispatcher launched eagerly."""
    from tritoninspect import inspect_module

    path, module = _asset("uses_dispatch_library")
    report = inspect_module(module.Net(), module.example_inputs(), device="cpu", stage="dynamo")
    assert report.graph_breaks
    lib = Path(module.tidispatchlib.__file__)
    user_line = line_of(path, "h = self.halve(h)")
    frames = (f"{path}:{user_line} in forward", f"{lib}:{line_of(lib, 'return halve(x)')} in forward",
              f"{lib}:{line_of(lib, 'return dispatch(')} in halve")
    for b in report.graph_breaks:
        assert (b.file, b.line, b.user_stack[-3:], b.library_frame) == (str(path), user_line, frames, frames[-1]), b
    first = report.graph_breaks[0]
    assert (first.compile_id, first.kernel, first.kernel_relation) == ("0/0", "lib_halve_kernel", "launched eagerly from this line")


def test_bare_heuristics_launches_break_themselves() -> None:
    """tests/assets/site-packages/tiheurlib, cut-cross-entropy 25.1.1's pattern: a `nonzero()` break in
    one call of the library, then two kernels under bare `triton.heuristics` launched from other calls at
    the same user line. Dynamo inlines Triton's `Heuristics.run` at each launch and breaks there (num_ctas
    from a Config's `all_kwargs()`; `torch.get_float32_matmul_precision()` in a heuristic): each kernel
    ran eagerly because of its own launch's break, not the `nonzero()` one, and a break inside Triton's
    runtime is a follow-on only in a frame Dynamo compiled from Triton's own code. Before: every
    num_ctas break had the follow-on hint, both kernels were pinned on the `nonzero()` break, and
    the recompile of Triton's launch lambda was advised as the user's guard."""
    from tritoninspect import inspect_module
    from tritoninspect.analyse.advice import _library_break_action
    from tritoninspect.analyse.breaks import RUNTIME_FOLLOW_ON

    path, module = _asset("uses_heuristics_library")
    report = inspect_module(module.Net(), module.example_inputs(), device="cpu", stage="dynamo")
    lib = Path(module.tiheurlib.__file__)
    by_gb: dict[str, list[Any]] = {}
    for b in report.graph_breaks:
        assert (b.file, b.line) == (str(path), line_of(path, "return tiheurlib.loss("))
        by_gb.setdefault(b.gb_id or "", []).append(b)
    assert set(by_gb) == {"GB0036", "GB0361", "GB0208"}, by_gb
    assert all(b.eager_kernels == () for b in by_gb["GB0036"])  # nonzero(): no kernel launched from its call
    for gb, kernel in (("GB0361", "_scale"), ("GB0208", "shift_kernel")):
        assert {b.kernel for b in by_gb[gb]} == {kernel} and {b.eager_kernels for b in by_gb[gb]} == {(kernel,)}
    own = [b for b in by_gb["GB0361"] if b.hint != RUNTIME_FOLLOW_ON.hint]
    assert own and all(b.hint and b.hint.startswith("Move num_ctas") for b in own), by_gb["GB0361"]
    assert own[0].user_stack[-1] == f"{lib}:{line_of(lib, 'scale_kernel[(')} in _scaled"
    # Both heuristics layers, outermost first (the Config's values, num_ctas among them, then EVEN).
    assert report.kernel("_scale").heuristics == ("BLOCK", "num_warps", "num_ctas", "num_stages", "EVEN")

    eager = {a.kernel: a for a in report.advice if a.rule == "eager_launches"}
    assert eager["_scale"].action.startswith("Move num_ctas"), eager
    assert report.recompiles and all(
        "Triton's own launch code" in a.action for a in report.advice if a.rule == "recompiles")
    # Were the stand-in installed: wrap_triton refuses a bare Heuristics, so no triton_op advice.
    brk = dataclasses.replace(own[0], library="tiheurlib")
    action = _library_break_action(report, brk)
    assert "wrap_triton refuses _scale: its outermost decorator is @triton.heuristics" in action, action
    assert "torch.library.custom_op" in action and "triton_op and torch.library.wrap_triton" not in action
