"""A compile or run that raises still gives a report (issue 11, item 1).

Fast tests build failure records from hand-made exceptions and render reports that hold
one; slow ones compile real models that fail in Dynamo, Inductor, AOTAutograd, the run and
the backward, through the CLI and the Python API.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from _expect import REPO, explain, run_cli
from tritoninspect.capture.failure import Progress, failure_record
from tritoninspect.analyse.checks import check_report
from tritoninspect.model.errors import ExitCode
from tritoninspect.render.terminal import TerminalRenderer
from tritoninspect.render._failure import failure_hint, failure_line
from tritoninspect.model.report import Failure, Report, read_report

ASSETS = REPO / "tests" / "assets" / "failures"
GOLD_REPORT = REPO / "tests" / "gold" / "report.json"
USER_FILE = str(REPO / "tests" / "assets" / "failures" / "shape_mismatch.py")


def _raise(exc: BaseException) -> BaseException:
    """`exc` with a traceback, as a capture would catch it."""
    try:
        raise exc
    except BaseException as caught:  # noqa: BLE001
        return caught


def _line(path: Path, marker: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if marker in line)


# --- records from exceptions (fast) ------------------------------------------------------------


def test_the_innermost_exception_is_recorded_through_wrappers() -> None:
    class BackendCompilerFailed(Exception):
        def __init__(self, inner: BaseException) -> None:
            super().__init__(f"backend failed: {inner}")
            self.inner_exception = inner

    inner = _raise(TypeError("launcher() missing 1 required positional argument: 'x'"))
    record = failure_record(_raise(BackendCompilerFailed(inner)), Progress())
    assert (record.exc_type, record.message) == ("TypeError", "launcher() missing 1 required positional argument: 'x'")


def test_context_suppressed_by_from_none_is_still_the_cause() -> None:
    """Dynamo raises TorchRuntimeError(...) from None over the real error."""
    try:
        try:
            raise RuntimeError("a and b must have same reduction dim, but got [2, 4] X [5, 3].")
        except RuntimeError:
            raise ValueError(
                "Dynamo failed to run FX node with fake tensors: call_function <built-in function matmul>(...)"
            ) from None
    except ValueError as exc:
        record = failure_record(exc, Progress())
    assert record.exc_type == "RuntimeError"
    assert record.message == "matmul: a and b must have same reduction dim, but got [2, 4] X [5, 3]."


def test_stage_is_the_backend_stage_the_exception_left() -> None:
    progress = Progress()
    exc = _raise(RuntimeError("lowering failed"))
    progress.backend_failed(exc, "inductor", "0/0", "forward")
    progress.backend_failed(exc, "aot", "0/0", "")  # the same exception leaving the outer stage
    record = failure_record(exc, progress)
    assert (record.stage, record.compile_id, record.part) == ("inductor", "0/0", "forward")


def test_a_frame_dynamo_skipped_earlier_is_not_this_failure() -> None:
    progress = Progress(call="backward")
    progress.compile_failed("0/0", "Unsupported", "skipped")
    record = failure_record(_raise(ValueError("later")), progress)
    assert (record.stage, record.compile_id) == ("backward", None)
    progress.compile_failed("1/0", "ValueError", "later")
    assert failure_record(_raise(ValueError("later")), progress).stage == "dynamo"


def test_the_raising_frame_is_a_librarys_when_a_library_raised_under_torch() -> None:
    # Found by the newcomer pass (h20): Liger's backward raising (UnboundLocalError) under
    # torch.autograd.Function.apply was "raised in: torch/autograd/function.py". Here torch's
    # tree_map calls the standard library's json.loads, which raises.
    import json as json_module

    from torch.utils._pytree import tree_map

    record = failure_record(_raise_from(lambda: tree_map(json_module.loads, ["{"])), Progress())
    assert record.torch_frame is not None and "json" in record.torch_frame.split(":")[0], record.torch_frame
    assert "_pytree" not in record.torch_frame


def _raise_from(call: Any) -> BaseException:
    try:
        call()
    except BaseException as caught:  # noqa: BLE001
        return caught
    raise AssertionError("did not raise")


def test_dynamo_footer_is_dropped_and_long_messages_cut() -> None:
    text = "\n".join(["headline", *[f"line {i}" for i in range(60)], "from user code:", '  File "x.py", line 1'])
    record = failure_record(_raise(RuntimeError(text)), Progress())
    lines = record.message.splitlines()
    assert lines[0] == "headline" and "from user code:" not in record.message
    assert len(lines) == 41 and lines[-1].startswith("... (")


# --- rendering and checks (fast) ---------------------------------------------------------------


FAILURE = Failure(
    stage="inductor", compile_id="0/0", part="forward", exc_type="TypeError",
    message="launcher() missing 1 required positional argument: 'x'\nsecond line",
    user_frame=f"{USER_FILE}:14 in forward", user_stack=(f"{USER_FILE}:14 in forward",),
    torch_frame="/site/torch/_inductor/runtime/triton_heuristics.py:120 in run",
)


def _failed_report() -> Report:
    return dataclasses.replace(read_report(GOLD_REPORT), failure=FAILURE)


def test_text_shows_the_failure_under_the_header() -> None:
    text = TerminalRenderer(width=120, color=False).render(_failed_report())
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("FAILED"))
    assert lines[at] == ("FAILED in Inductor [0/0] (forward): TypeError: launcher() missing 1 required "
                         "positional argument: 'x'")
    assert at < next(i for i, line in enumerate(lines) if line.startswith("Dynamo graphs"))
    assert "  your code: tests/assets/failures/shape_mismatch.py:14 in forward" in lines
    assert "  │ second line" in lines


def test_the_raising_library_frame_is_named_from_its_package_down() -> None:
    # Found by the newcomer pass (h20): "raised in: autograd.py:84 in backward" did not say which
    # of torch's several autograd.py files raised.
    installed = "/venv/lib/python3.11/site-packages/torch/_library/autograd.py:84 in backward"
    report = dataclasses.replace(_failed_report(), failure=dataclasses.replace(FAILURE, torch_frame=installed))
    lines = TerminalRenderer(width=120, color=False).render(report).splitlines()
    assert "  raised in: torch/_library/autograd.py:84 in backward" in lines


def test_an_op_without_a_backward_gets_a_hint() -> None:
    message = ("Trying to backward through mylib.op.default but no autograd formula was registered. "
               "Please use register_autograd to add one.")
    failure = dataclasses.replace(FAILURE, stage="aot", exc_type="RuntimeError", message=message)
    text = TerminalRenderer(width=120, color=False).render(dataclasses.replace(_failed_report(), failure=failure))
    assert "\n  hint: the op has no backward" in text and "--no-backward" in text
    assert "register_autograd" in failure_line(failure) and failure_hint(FAILURE) is None


def test_a_failed_report_round_trips_and_fails_every_check() -> None:
    report = _failed_report()
    assert Report.from_json(report.to_json()) == report
    failures = check_report(report, max_graphs=100)
    assert failures == ["the compile failed at inductor [0/0]: TypeError: launcher() missing 1 required positional "
                        "argument: 'x'"]


def test_one_line_summary_of_a_kernel_compile_error_is_its_last_line() -> None:
    # Triton's CompilationError starts with the place and the source; what failed is the last line.
    failure = dataclasses.replace(FAILURE, stage="kernel_compile", compile_id=None, exc_type="CompilationError",
                                  message="at 5:33:\n    x = tl.load(x_ptr) * undefined_scale\n"
                                          "                                 ^\nNameError('undefined_scale')")
    assert failure.summary() == "failed at kernel_compile: CompilationError: NameError('undefined_scale')"
    assert FAILURE.summary() == ("failed at inductor [0/0]: TypeError: launcher() missing 1 required "
                                 "positional argument: 'x'")


def test_a_version_1_report_still_reads() -> None:
    data = json.loads(GOLD_REPORT.read_text())
    del data["failure"]
    report = Report.from_dict({**data, "schema_version": 1})
    assert report.failure is None and report.kernels


# --- real compiles (slow) ----------------------------------------------------------------------


@pytest.mark.slow
def test_dynamo_failure_names_the_op_and_both_shapes_and_keeps_torch_logs_quiet() -> None:
    asset = ASSETS / "shape_mismatch.py"
    proc = run_cli(["graph", f"{asset.relative_to(REPO)}:Net", "--json"], timeout=300)
    assert proc.returncode == ExitCode.USER_CODE, explain(proc)
    failure = json.loads(proc.stdout)["failure"]
    assert (failure["stage"], failure["compile_id"], failure["exc_type"]) == ("dynamo", "0/0", "RuntimeError")
    assert failure["message"].startswith("matmul: a and b must have same reduction dim, but got [2, 4] X [5, 3]")
    assert failure["user_frame"] == f"{asset}:{_line(asset, 'MISMATCH-LINE')} in forward"
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: the model failed while Dynamo traced"), proc.stderr
    assert "[2, 4] X [5, 3]" in lines[0]


@pytest.mark.slow
def test_backward_failure_keeps_the_forward_graphs() -> None:
    asset = ASSETS / "backward_raises.py"
    proc = run_cli(["graph", f"{asset.relative_to(REPO)}:Net"], timeout=300)
    assert proc.returncode == ExitCode.USER_CODE, explain(proc)
    assert "FAILED while running backward: ValueError: no gradient for you" in proc.stdout
    assert f"your code: tests/assets/failures/backward_raises.py:{_line(asset, 'RAISE-LINE')} in backward" in proc.stdout
    assert "Dynamo graphs: 2" in proc.stdout and "AOT forward: 1" in proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize(("stage", "patched"), [("inductor", "compile_fx_inner"), ("aot", "aot_autograd_backend")])
def test_compiler_failure_names_the_stage_and_keeps_what_came_before(
    monkeypatch: pytest.MonkeyPatch, stage: str, patched: str
) -> None:
    import torch

    from tritoninspect import inspect_module
    from tritoninspect.capture import compat

    def broken(*args: object, **kwargs: object) -> object:
        def compiler(*a: object, **k: object) -> object:
            raise RuntimeError(f"{patched} broke")

        return compiler

    monkeypatch.setattr(compat.inductor, patched, broken)

    def model(x: torch.Tensor) -> torch.Tensor:
        return torch.sin(x) * 2

    report = inspect_module(model, (torch.ones(4),), stage=stage)
    assert report.failure is not None
    assert (report.failure.stage, report.failure.compile_id) == (stage, "0/0")
    assert report.failure.message == f"{patched} broke"
    assert [g.stage for g in report.graphs][:1] == ["dynamo"]


@pytest.mark.slow
def test_a_triton_op_without_autograd_under_grad_fails_with_a_hint() -> None:
    asset = ASSETS / "op_without_autograd.py"
    proc = run_cli(["graph", f"{asset.relative_to(REPO)}:Net"], timeout=300)
    assert proc.returncode == ExitCode.USER_CODE, explain(proc)
    assert "no autograd formula was registered" in proc.stdout
    assert "  hint: the op has no backward" in proc.stdout
    assert "hint: the op has no backward" in proc.stderr
    forward_only = run_cli(["graph", f"{asset.relative_to(REPO)}:Net", "--no-backward"], timeout=300)
    assert forward_only.returncode == 0, explain(forward_only)


def test_a_failure_before_any_kernel_ran_names_the_ops_the_graph_calls() -> None:
    asset = ASSETS / "op_without_autograd.py"
    proc = run_cli(["graph", f"{asset.relative_to(REPO)}:OpaqueNet", "-q"], timeout=300)
    assert proc.returncode == ExitCode.USER_CODE, explain(proc)
    (op,) = re.findall(r'custom_op\("([\w:]+)"', asset.read_text())
    text = " ".join(proc.stdout.split())
    assert "Kernels (0)" in text
    assert f"no user-defined Triton kernel was seen before the failure; the Dynamo graphs call {op}, whose " \
           "kernels the compile did not reach" in text


# --- recompile limits --------------------------------------------------------------------------


LIMIT_REASON = (
    "Dynamo recompile limit exceeded\n  Explanation: Dynamo attempted to recompile the code object too many times, "
    "exceeding the recompile_limit cache size limit (currently set to 8).\n\n  Developer debug context: Limit type: "
    "recompile_limit\n"
)


def test_recompile_limit_text() -> None:
    from tritoninspect.textformats.breaks import recompile_limit

    assert recompile_limit(LIMIT_REASON) == ("recompile_limit", 8)
    assert recompile_limit("Dynamo recompile limit exceeded (no details)") == ("recompile_limit", None)
    assert recompile_limit("Unsupported: call_function foo") is None


@pytest.mark.slow
def test_a_hit_recompile_limit_is_a_finding_and_the_refused_compile_no_recompile() -> None:
    asset = REPO / "tests" / "assets" / "recompile_storm.py"
    proc = run_cli(["breaks", f"{asset.relative_to(REPO)}:Net", "--json"], timeout=300)
    assert proc.returncode == 0, explain(proc)
    report = json.loads(proc.stdout)
    assert report["recompile_limits"] == [{
        "compile_id": "0/8", "limit_type": "recompile_limit", "limit": 8, "function": "forward",
        "file": str(asset), "line": _line(asset, "FORWARD-LINE"),
    }]
    graphs = {g["compile_id"] for g in report["graphs"] if g["stage"] == "dynamo"}
    assert [r["compile_id"] for r in report["recompiles"]] == [f"0/{i}" for i in range(1, 8)]
    assert {r["compile_id"] for r in report["recompiles"]} <= graphs
    assert proc.stderr == ""
    text = run_cli(["breaks", f"{asset.relative_to(REPO)}:Net"], timeout=300).stdout
    assert "recompile limit hit [0/8]: forward (tests/assets/recompile_storm.py:" in text


def test_diff_shows_the_failing_sides_partial_report(tmp_path: Path) -> None:
    failed = tmp_path / "failed.json"
    failed.write_text(_failed_report().to_json())
    proc = run_cli(["diff", str(failed), str(GOLD_REPORT)], timeout=120)
    assert proc.returncode == ExitCode.USER_CODE, explain(proc)
    assert ("A  FAILED failed at inductor [0/0]: TypeError: launcher() missing 1 required positional argument: "
            "'x'") in proc.stdout.replace("\n", " ")
    assert "kernels" in proc.stdout  # the rows of what was captured are still compared
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith("error: A: the model failed in Inductor [0/0]")
    as_json = json.loads(run_cli(["diff", str(failed), str(GOLD_REPORT), "--json"], timeout=120).stdout)
    assert as_json["a"]["failure"].startswith("failed at inductor [0/0]") and as_json["b"]["failure"] is None


def test_a_message_of_megabytes_is_cut_per_line() -> None:
    record = failure_record(_raise(ValueError("x" * 5_000_000 + "\nsecond")), Progress())
    first, second = record.message.splitlines()
    assert first.startswith("x" * 2000 + "... (") and first.endswith(" more characters)") and len(first) < 2100
    assert second == "second"


# --- code that asks for CUDA in compile-only mode (issue 22 item 4) ----------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name, stage", [("cuda_alloc_traced", "dynamo"), ("cuda_alloc_eager", "run")])
def test_a_cuda_allocation_in_compile_only_mode_is_one_error_line_naming_it(name: str, stage: str) -> None:
    """Traced, torch aborted the process (SIGABRT: no report, no error line); eager, torch said
    only "Torch not compiled with CUDA enabled". Both are now the failure record and one line
    saying compile-only mode cannot create CUDA tensors, where, and what to do."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here: compile-only mode allocates the CUDA tensor for real")
    asset = ASSETS / f"{name}.py"
    proc = run_cli(["graph", f"{asset.relative_to(REPO)}:Net", "--json"], timeout=300)
    assert proc.returncode == ExitCode.USER_CODE, explain(proc)
    failure = json.loads(proc.stdout)["failure"]
    place = f"{asset}:{_line(asset, '# CUDA-ALLOC')} in "
    assert (failure["stage"], failure["exc_type"]) == (stage, "NoCudaDevice"), failure
    assert "compile-only mode cannot create CUDA tensors" in failure["message"]
    assert place in failure["message"] and failure["torch_frame"].startswith(place)
    assert "run it on a machine with a GPU" in failure["message"]
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: the model failed"), proc.stderr
    assert "compile-only mode cannot create CUDA tensors" in lines[0] and place in lines[0]


def test_cudagraph_recording_a_partition_after_item_gets_torchs_issue_as_a_hint() -> None:
    """The H200's torch 2.11 raises this under `--cudagraphs` for tests/assets/cudagraphs_item.py, and so does
    plain `torch.compile(mode="reduce-overhead")` (tests/gpu/test_gpu_cudagraphs.py): the hint says it is torch's
    and gives the workaround; the same AssertionError elsewhere gets none."""
    frame = "torch/_inductor/cudagraph_trees.py:1729 in _allocate_and_copy_recording_inputs"
    failure = dataclasses.replace(FAILURE, stage="run", exc_type="AssertionError", message="", torch_frame=frame)
    hint = failure_hint(failure) or ""
    assert "pytorch/pytorch#189123" in hint and "graph_partition = False" in hint
    assert "#189123" in failure_line(failure)
    assert failure_hint(dataclasses.replace(failure, torch_frame="torch/_inductor/utils.py:1 in run")) is None
    assert failure_hint(dataclasses.replace(failure, exc_type="RuntimeError")) is None


# --- a kernel whose Inductor copy lacks a name (a module alias) --------------------------------


@pytest.mark.slow
def test_a_kernel_copy_lacking_a_module_alias_is_a_failure_of_torch_compile() -> None:
    """`ldv.tanh(x)` after `from triton.language.extra.cuda import libdevice as ldv`: Inductor's copy
    of the kernel lacks `ldv`, and on a GPU Triton's compile of it fails. Compile-only mode called it
    "a limit of compile-only mode", skipped the launch and exited 0."""
    asset = ASSETS / "libdevice_module_alias.py"
    proc = run_cli(["graph", f"{asset.relative_to(REPO)}:Net", "--json"], timeout=300)
    assert proc.returncode == ExitCode.USER_CODE, explain(proc)
    failure = json.loads(proc.stdout)["failure"]
    assert (failure["exc_type"], failure["stage"], failure["kernel"]) == ("KernelCopyNameError", "kernel_compile",
                                                                         "_tanh_kernel"), failure
    assert "module triton.language.extra.cuda.libdevice imported as ldv" in failure["message"]
    assert "from triton.language.extra.cuda.libdevice import" in failure["message"]
    assert failure["user_frame"].startswith(str(asset)) and failure["user_frame"].endswith(" in forward")
    assert "limit of compile-only mode" not in proc.stdout + proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("model, kernel, lacks", [
    ("TAlias", "_t_kernel", "module triton.language imported as T"),
    ("MathPi", "_pi_kernel", "module math imported as math"),
    ("HelperAlias", "_helper_kernel", "module triton.language.extra.libdevice imported as ld"),
])
def test_other_names_a_kernel_copy_lacks_fail_too(model: str, kernel: str, lacks: str) -> None:
    """`T.arange` met the interpreter's TypeVar `T` and `math.pi` its `math` (both filled into Inductor's
    copy by the interpreter): a skipped launch and a passing run, or no word at all; a helper's `ld`
    was one NameError deeper than the check looked. On a GPU each fails."""
    asset = ASSETS / "copy_lacks_names.py"
    proc = run_cli(["graph", f"{asset.relative_to(REPO)}:{model}", "--json"], timeout=300)
    assert proc.returncode == ExitCode.USER_CODE, explain(proc)
    failure = json.loads(proc.stdout)["failure"]
    assert (failure["exc_type"], failure["kernel"]) == ("KernelCopyNameError", kernel), failure
    assert lacks in failure["message"], failure


def test_a_name_error_the_users_kernel_shares_is_not_blamed_on_the_copy() -> None:
    """Only a name the user's module defines and the copy's lacks is the copy's fault."""
    import types

    from triton.runtime.errors import InterpreterError

    from tritoninspect.capture.compat.kernel_copies import KernelCopyNameError, copy_lacks_a_name

    def kernel() -> None:
        json.dumps, nowhere, tl  # type: ignore[name-defined]  # noqa: B018, F821 - the globals it loads

    copy = types.FunctionType(kernel.__code__, {"tl": object()}, "kernel")

    def name_error(name: str) -> BaseException:
        exc = InterpreterError(f"NameError({name!r})")
        exc.__cause__ = NameError(f"name {name!r} is not defined", name=name)
        return exc

    assert isinstance(copy_lacks_a_name(copy, kernel, name_error("json")), KernelCopyNameError)  # this module's
    assert copy_lacks_a_name(copy, kernel, name_error("nowhere")) is None  # the user's kernel lacks it too
    assert copy_lacks_a_name(copy, kernel, name_error("tl")) is None  # the copy has it
    assert copy_lacks_a_name(copy, None, name_error("json")) is None  # not Inductor's copy
    assert copy_lacks_a_name(copy, kernel, InterpreterError("other")) is None


@pytest.mark.slow
def test_a_0d_parameter_passed_as_a_number_is_named_as_compile_only_s_own() -> None:
    """Liger's PolyNorm loads its 0-d bias through a pointer; compile-only mode's CPU tensors make
    Inductor pass it as a number (`.item()`), and the kernel does not compile. The failure blamed a
    device probe; it now names the parameter, and that a GPU run passes a pointer."""
    asset = ASSETS / "zero_d_parameter.py"
    proc = run_cli(["graph", f"{asset.relative_to(REPO)}:Net", "--json"], timeout=300)
    assert proc.returncode == ExitCode.USER_CODE, explain(proc)
    report = json.loads(proc.stdout)
    assert report["failure"]["stage"] == "kernel_compile", report["failure"]
    (note,) = [d for d in report["diagnostics"] if "0-d tensor argument" in d["message"]]
    assert note["source"] == "compile-only" and "_add_bias_kernel (b_ptr)" in note["message"], note
    assert "a GPU run passes a pointer" in proc.stderr and "device probe" not in proc.stderr, proc.stderr
    check = run_cli(["check", f"{asset.relative_to(REPO)}:Net"], timeout=300)
    assert check.returncode == 1 and "a GPU run passes a pointer" in check.stdout, explain(check)


def test_inductors_fp64_scalar_is_compiled_as_inductor_types_it() -> None:
    """Compile-only mode compiled Inductor's launch of a user kernel with the types an eager launch gives
    (a Python float fp32), so a kernel whose runtime branch recasts the float compiled here, with a reassuring
    fp64 note and exit 0, and fails on a GPU (hostile, stop 39). Eager, the same launch compiles."""
    asset = ASSETS / "fp64_scalar_branch.py"
    proc = run_cli(["graph", f"{asset.relative_to(REPO)}:Net", "--json"], timeout=300)
    assert proc.returncode == ExitCode.USER_CODE, explain(proc)
    failure = json.loads(proc.stdout)["failure"]
    assert failure["stage"] == "kernel_compile" and failure["kernel"] == "k_runtime", failure
    assert "is of type fp64[], but the then block redefines it as fp32[]" in failure["message"], failure
    eager = run_cli(["graph", f"{asset.relative_to(REPO)}:Eager", "--json"], timeout=300)
    assert eager.returncode == ExitCode.OK, explain(eager)


# --- Dynamo's resume functions are the user's functions (hostile, finding K e) -----------------------------


def _broken_then_view(x: Any) -> Any:
    import torch

    y = torch.sin(x)
    torch._dynamo.graph_break()  # RESUME-BREAK
    return y.view(3, -1)  # RESUMED-VIEW


def _broken_then_raise(x: Any) -> Any:
    import torch

    y = torch.sin(x)
    torch._dynamo.graph_break()
    raise ValueError("boom")  # RESUMED-RAISE


def _broken_then_cuda(x: Any) -> Any:
    import torch

    y = torch.sin(x)
    torch._dynamo.graph_break()
    return y + torch.zeros(8, device="cuda").cpu()  # RESUMED-CUDA


def _calls_a_fake_that_raises(x: Any) -> Any:
    return _fake_raises_op()(x)  # FAKE-CALL


def _fake_raises_op() -> Any:
    import torch

    if not hasattr(_fake_raises_op, "op"):
        @torch.library.custom_op("tifailure::fake_raises", mutates_args=(), schema="(Tensor x) -> Tensor")
        def fake_raises(x):
            return x * 2

        @fake_raises.register_fake
        def _(x):
            raise ValueError("fake boom")  # FAKE-RAISE

        _fake_raises_op.op = fake_raises  # type: ignore[attr-defined]
    return _fake_raises_op.op  # type: ignore[attr-defined]


def _compiled_failure(fn: Any) -> Failure:
    import torch

    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager")(torch.randn(8))
    except Exception as exc:  # noqa: BLE001
        return failure_record(exc, Progress())
    finally:
        torch._dynamo.reset()
    raise AssertionError(f"{fn.__name__} did not fail")


HERE = Path(__file__).resolve()


@pytest.mark.parametrize("fn, marker", [(_broken_then_view, "RESUMED-VIEW"), (_broken_then_raise, "RESUMED-RAISE")])
def test_a_failure_after_a_graph_break_is_at_the_user_s_function_and_line(fn: Any, marker: str) -> None:
    """After a graph break Dynamo runs the rest of a function as its resume function
    (`torch_dynamo_resume_in_<fn>_at_<line>`), which the user never wrote: the error line said
    "at ...:RESUME-BREAK in <fn>" (the line of the break, where the function calls its resume function)
    for a failure Dynamo traced, and "in torch_dynamo_resume_in_<fn>_at_N" for one raised eagerly."""
    record = _compiled_failure(fn)
    assert record.user_frame == f"{HERE}:{_line(HERE, '# ' + marker)} in {fn.__name__}", record.user_stack
    # Under the test's own call, only the function itself, once.
    assert record.user_stack[-2:] == (f"{HERE}:{_line(HERE, 'torch.compile(fn')} in _compiled_failure",
                                      record.user_frame), record.user_stack


def test_a_frame_that_ran_while_dynamo_traced_stays_inside_the_traced_one() -> None:
    """A custom op's fake implementation runs while Dynamo traces the call: it raised, innermost, under
    the traced frame that called the op (which the Python traceback does not hold)."""
    _fake_raises_op()
    record = _compiled_failure(_calls_a_fake_that_raises)
    assert record.user_stack[-2:] == (f"{HERE}:{_line(HERE, '# FAKE-CALL')} in _calls_a_fake_that_raises",
                                      f"{HERE}:{_line(HERE, '# FAKE-RAISE')} in _"), record.user_stack
    assert record.user_frame == record.user_stack[-1]


def test_compile_only_s_cuda_refusal_names_the_user_s_function_not_the_resume_function() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here: compile-only mode allocates the CUDA tensor for real")
    from tritoninspect.capture.session import compile_only

    with compile_only():
        record = _compiled_failure(_broken_then_cuda)
    place = f"{HERE}:{_line(HERE, '# RESUMED-CUDA')} in _broken_then_cuda"
    assert record.exc_type == "NoCudaDevice" and f"{place} asks for a tensor" in record.message, record.message
    assert "torch_dynamo_resume" not in record.message and record.user_frame == place


def test_a_frame_two_chained_tracebacks_hold_is_listed_once() -> None:
    """torch 2.14 chains a custom op's fake implementation's error to an exception whose traceback repeats the
    fake's frame: the stack listed it twice (test_a_frame_that_ran_while_dynamo_traced_stays_inside_the_traced_one
    on 2.14)."""
    from tritoninspect.capture.failure import _own_frames

    def inner() -> None:
        raise ValueError("inner")

    try:
        inner()
    except ValueError as exc:
        first = exc
    second = RuntimeError("outer").with_traceback(first.__traceback__)
    frames = _own_frames([first, second])
    assert [name for _, _, name in frames] == ["test_a_frame_two_chained_tracebacks_hold_is_listed_once", "inner"]
