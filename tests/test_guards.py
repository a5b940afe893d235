"""Guards a kernel's specialisation adds, shown with the kernel as a recompile risk (issue 22, item 3).

Fast tests run the analysis (`analyse/guards.py`) on records made by hand, each as capture writes
them; slow tests run the CLI on tests/assets/guard_kernels.py, whose models make torch add such
guards (a heuristics value from a size, a size passed to a constexpr) and an unbacked size.
"""

from __future__ import annotations

from typing import Any

import pytest

from _expect import REPO, CliRuns, json_report, kernels_by_name, line_of
from tritoninspect.analyse import build_report
from tritoninspect.capture.compat.shapes import ShapeGuard, name_symbols, readable_source
from tritoninspect.model.records import Capture, GuardRecord, KernelRecord, NodeRecord, SymbolRecord
from tritoninspect.render import render

ASSET = REPO / "tests" / "assets" / "guard_kernels.py"


def _capture(kernel: KernelRecord, node: NodeRecord, guards: list[GuardRecord],
             symbols: list[SymbolRecord] = ()) -> Capture:  # type: ignore[assignment]
    capture = Capture(meta={"mode": "compile-only", "stage": "inductor"})
    capture.kernels[kernel.id] = kernel
    capture.nodes.append(node)
    capture.guards.extend(guards)
    capture.symbols.extend(symbols)
    return capture


ROWS = KernelRecord("k1", "row_kernel", "/m/model.py", 10, ("jit",), ("N_COLS", "BLOCK"))
ROWS_NODE = NodeRecord("0/0", "dynamo", "", "", "triton_kernel_wrapper_mutation", "mutation", "k1",
                       grid=(("s77", 1, 1),), constexprs={"N_COLS": 48, "BLOCK": 64}, scalars={},
                       source="/m/model.py:30")
EVEN = KernelRecord("k2", "even_kernel", "/m/model.py", 3, ("heuristics", "jit"), ("BLOCK", "EVEN"),
                    heuristics=("EVEN",))
EVEN_NODE = NodeRecord("0/0", "dynamo", "", "", "triton_kernel_wrapper_mutation", "mutation", "k2",
                       grid=(("((s77 + 15)//16)", 1, 1),), constexprs={"BLOCK": 16, "EVEN": True},
                       scalars={"n": "s77"}, source="/m/model.py:20")


def test_guard_on_the_launch_line_is_tied_to_the_constexpr_it_names() -> None:
    guard = GuardRecord("0/0", "x.size(1) == 48", "s27 == 48", ("s27",), "m/model.py", 30, "row_kernel[...]")
    other = GuardRecord("0/0", "x.size(0) > 2", "s77 > 2", ("s77",), "m/model.py", 31)
    (kernel,) = build_report(_capture(ROWS, ROWS_NODE, [guard, other])).kernels
    (found,) = kernel.guards
    assert (found.guard, found.cause, found.params, found.where) == (
        "x.size(1) == 48", "constexpr", ("N_COLS",), "m/model.py:30")


def test_guard_in_heuristics_is_tied_to_the_heuristics() -> None:
    guard = GuardRecord("0/0", "(x.size(0) % 16) == 0", "(s77 % 16) == 0", ("s77",),
                        "triton/runtime/autotuner.py", 459, "return self.fn.run(*args, **kwargs)")
    (kernel,) = build_report(_capture(EVEN, EVEN_NODE, [guard])).kernels
    (found,) = kernel.guards
    assert (found.cause, found.params) == ("heuristics", ("EVEN",))


def test_heuristics_guard_of_another_compile_is_not_tied() -> None:
    guard = GuardRecord("1/0", "(x.size(0) % 16) == 0", "(s77 % 16) == 0", ("s77",), "triton/runtime/autotuner.py", 459)
    (kernel,) = build_report(_capture(EVEN, EVEN_NODE, [guard])).kernels
    assert kernel.guards == ()


def test_symbolic_arguments_say_what_their_symbols_stand_for() -> None:
    symbols = [SymbolRecord("0/0", "s77", "x.size(0)")]
    (kernel,) = build_report(_capture(EVEN, EVEN_NODE, [], symbols)).kernels
    assert [(a.param, a.value, a.symbols, a.unbacked) for a in kernel.symbolic_args] == [
        ("n", "s77", ("s77 = x.size(0)",), False),
        ("grid", "((s77 + 15)//16)", ("s77 = x.size(0)",), False),
    ]


def test_text_and_html_show_the_guard_as_a_recompile_risk() -> None:
    guard = GuardRecord("0/0", "x.size(1) == 48", "s27 == 48", ("s27",), "m/model.py", 30)
    report = build_report(_capture(ROWS, ROWS_NODE, [guard]))
    detail = render(report, "detail", color=False, width=140)
    (line,) = [line.strip() for line in detail.splitlines() if "x.size(1) == 48" in line]
    assert line.startswith("guard") and "[0/0]: constexpr N_COLS (m/model.py:30)" in line
    assert "recompiles" in detail
    assert "x.size(1) == 48" in render(report, "html")
    breaks = render(report, "breaks", color=False, width=140)
    assert "Recompile risks: guards the kernels' launches added (1)" in breaks
    assert "row_kernel: x.size(1) == 48 [0/0]" in breaks


def test_capture_round_trips_guards_and_symbols() -> None:
    capture = _capture(ROWS, ROWS_NODE, [GuardRecord("0/0", "a", "b", ("s1",), "f.py", 3, "c")],
                       [SymbolRecord("0/0", "u0", "n = t.item()", "f.py:2")])
    again = Capture.from_json(capture.to_json())
    assert again.guards == capture.guards and again.symbols == capture.symbols


@pytest.mark.parametrize(("name", "want"), [("L['x'].size()[1]", "x.size(1)"), ("L['self'].w.item()", "self.w.item()"),
                                            ("L['x'].stride()[0]", "x.stride(0)")])
def test_sources_read_as_python(name: str, want: str) -> None:
    assert readable_source(name) == want


def test_symbols_are_named_by_source_and_the_place_is_parsed() -> None:
    assert name_symbols("(s77 % 16) == 0", {"s77": "x.size(0)"}) == "(x.size(0) % 16) == 0"
    guard = ShapeGuard("e", "s", (), "row_kernel[(x.shape[0],)](x)  # mp/m/model.py:36 in forward")
    assert guard.place() == ("mp/m/model.py", 36, "row_kernel[(x.shape[0],)](x)")
    assert ShapeGuard("e", "s", (), None).place() == (None, None, "")


# --- slow: torch adds them -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def runs() -> Any:
    cli = CliRuns(workers=2)
    for name in GUARD_CHECKS:
        cli.submit(name, ["graph", f"{ASSET}:{name}", "--json", "--device", "cpu"])
    yield cli
    cli.close()


def check_heuristic_guard(report: dict[str, Any]) -> None:
    kernel = kernels_by_name(report)["even_kernel"]
    guards = [g for g in kernel["guards"] if g["cause"] == "heuristics"]
    assert guards, kernel["guards"]
    assert guards[0]["params"] == ["EVEN"] and "x.size(0)" in guards[0]["guard"] and "16" in guards[0]["guard"]


def check_constexpr_guard(report: dict[str, Any]) -> None:
    kernel = kernels_by_name(report)["row_kernel"]
    (guard,) = [g for g in kernel["guards"] if g["cause"] == "constexpr"]
    assert guard["guard"] == "x.size(1) == 48" and "N_COLS" in guard["params"]
    assert guard["where"].endswith(f"guard_kernels.py:{line_of(ASSET, 'row_kernel[(x.shape[0],)]')}")


def check_unbacked_arg(report: dict[str, Any]) -> None:
    kernel = kernels_by_name(report)["copy_kernel"]
    (n,) = [a for a in kernel["symbolic_args"] if a["param"] == "n"]
    assert n["unbacked"] and n["value"].startswith("u")
    (said,) = n["symbols"]
    assert ".item()" in said and f"guard_kernels.py:{line_of(ASSET, 'n = (x > 0).sum().item()')}" in said


#: Model -> what its report must say (shared with tests/gpu/test_gpu_facts.py).
GUARD_CHECKS = {"Heuristic": check_heuristic_guard, "Rows": check_constexpr_guard, "Positives": check_unbacked_arg}


@pytest.mark.slow
@pytest.mark.parametrize("name", GUARD_CHECKS)
def test_kernel_guards_and_symbolic_sizes(runs: CliRuns, name: str) -> None:
    GUARD_CHECKS[name](json_report(runs.get(name)))
