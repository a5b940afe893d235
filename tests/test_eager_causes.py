"""Why an eager launch ran outside the graph when no graph break says so (schema 7's
Occurrence.disabled_by, .disabled_library, .backward_of; schema 8's .forward_break): what the capture reads off the stack of a
launch (tier a, on real torch frames, nothing compiled), what the analysis ties together, and what the
advice says (on a saved report with the facts set, as a capture of fla-core's chunk_gla records them:
its forward disabled by fla-core's own `@torch.compiler.disable`, fla/ops/gla/chunk.py:1453 in 0.6.0,
and ChunkGLAFunction's backward kernels run by the autograd engine)."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
from pathlib import Path
from typing import Any

import torch

from tritoninspect.analyse.advice import advise
from tritoninspect.analyse.eager_causes import eager_cause
from tritoninspect.capture.breaks import autograd_backward, autograd_forward, disabled_sites
from tritoninspect.model.records import BreakRecord, Capture, LaunchRecord
from tritoninspect.model.report import Library, Occurrence, Report, read_report

FIXTURES = Path(__file__).parent / "fixtures"
HERE = __file__
FLA = Library("fla-core", "0.6.0", "fla", "https://github.com/fla-org/flash-linear-attention")
CHUNK = "/site-packages/fla/ops/gla/chunk.py"
DISABLE = f"{CHUNK}:1453 in chunk_gla"
FORWARD = f"{CHUNK}:1377 in ChunkGLAFunction.forward"


# --- capture: what a launch's stack shows -------------------------------------------------------------

@torch.compiler.disable
def _decorated() -> tuple[str, ...]:
    return disabled_sites()


def _probe() -> tuple[str, ...]:
    return disabled_sites()


def _dispatch(fn: Any) -> Any:
    """fla-core's dispatcher (fla/backends.py:203): `return torch.compiler.disable(wrapper)`."""
    @functools.wraps(fn)
    def wrapper(*args: Any) -> Any:
        return fn(*args)
    return torch.compiler.disable(wrapper)


_dispatched = _dispatch(_probe)


def _line_of(text: str) -> int:
    lines = Path(HERE).read_text().splitlines()
    (number,) = [n for n, line in enumerate(lines, 1) if line.strip() == text]
    return number


def test_a_launch_inside_a_disabled_function_names_the_disable_line() -> None:
    assert _decorated() == (f"{HERE}:{_line_of('@torch.compiler.disable')} in _decorated",)
    assert _dispatched() == (f"{HERE}:{_line_of('return torch.compiler.disable(wrapper)')} in _probe",)
    assert _probe() == ()


class _Twice(torch.autograd.Function):
    seen: list[Any] = []

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        _Twice.seen.append(autograd_backward())
        return grad * 2


def test_a_launch_from_an_autograd_backward_names_its_forward() -> None:
    x = torch.ones(2, requires_grad=True)
    _Twice.apply(x).sum().backward()
    lines, first = inspect.getsourcelines(_Twice.forward)
    back, start = inspect.getsourcelines(_Twice.backward)
    assert _Twice.seen == [(f"{HERE}:{first} in _Twice.forward", (first, first + len(lines) - 1),
                            (start, start + len(back) - 1))]
    assert autograd_backward() is None


class _Inside(torch.autograd.Function):
    seen: list[Any] = []

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        _Inside.seen.append(autograd_forward(sys._getframe()))
        return x * 2

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return grad * 2


def test_a_launch_inside_an_eager_autograd_forward_names_that_forward() -> None:
    """What a launch from a compiled graph records when the Function's `apply` around it ran eagerly
    (`Occurrence.inside_forward`); nothing outside a Function's forward."""
    _Inside.apply(torch.ones(2, requires_grad=True))
    first = inspect.getsourcelines(_Inside.forward)[1]
    assert _Inside.seen == [f"{HERE}:{first} in _Inside.forward"]
    assert autograd_forward(sys._getframe()) is None


# --- analysis: the backward's forward and its disable -------------------------------------------------

def _launch(kernel: str, site: tuple[str, ...], disabled: tuple[str, ...] = (), **more: Any) -> LaunchRecord:
    return LaunchRecord("jit", kernel, None, None, False, None, site=site, disabled=disabled, **more)


def test_a_backward_launch_takes_the_disable_its_forward_ran_inside() -> None:
    dispatch = "/site-packages/fla/backends.py:203 in chunk_gla_bwd_dv"
    fwd = _launch("k.fwd", ("m.py:26 in forward", f"{CHUNK}:1402 in forward"), (DISABLE,))
    bwd = _launch("k.bwd", (f"{CHUNK}:1433 in backward",), (dispatch,), backward_of=FORWARD,
                  forward_lines=(1377, 1426))
    capture = Capture(meta={}, launches=[fwd, bwd])
    assert eager_cause(capture, fwd) == {"disabled_by": DISABLE, "disabled_library": None, "backward_of": None,
                                          "forward_break": None}
    # Its own dispatcher's disable is not why it is eager: the engine runs the backward of an eager forward.
    assert eager_cause(capture, bwd)["disabled_by"] == DISABLE
    alone = Capture(meta={}, launches=[bwd])
    assert eager_cause(alone, bwd) == {"disabled_by": None, "disabled_library": None, "backward_of": FORWARD,
                                       "forward_break": None}
    assert eager_cause(capture, dataclasses.replace(fwd, in_graph=True)) == {}


def test_a_backward_launch_takes_the_break_dynamo_met_tracing_that_backward() -> None:
    """mamba-ssm 2.3's MambaChunkScanCombinedFn: Dynamo traces the Function's backward with its forward and
    breaks in it (`_state_passing_bwd_kernel.best_config`, ssd_state_passing.py:278), so the Function runs
    outside the graph and the engine runs its backward eagerly; the break was not tied to that backward's
    launches ("this report ties no graph break ... to that forward")."""
    combined = "/site-packages/mamba_ssm/ops/triton/ssd_combined.py"
    forward = f"{combined}:595 in MambaChunkScanCombinedFn.forward"
    stack = ("m.py:16 in forward", f"{combined}:643 in mamba_chunk_scan_combined", f"{combined}:620 in backward",
             f"{combined}:458 in _mamba_chunk_scan_combined_bwd",
             "/site-packages/mamba_ssm/ops/triton/ssd_state_passing.py:278 in _state_passing_bwd")
    brk = BreakRecord("0/0", "Unsupported python_type() call", "m.py", 16, user_stack=stack)
    bwd = _launch("k.bwd", (f"{combined}:458 in _mamba_chunk_scan_combined_bwd",), backward_of=forward,
                  forward_lines=(595, 612))
    assert eager_cause(Capture(meta={}, launches=[bwd], breaks=[brk]), bwd)["forward_break"] is None
    traced = dataclasses.replace(bwd, backward_lines=(614, 622))
    assert eager_cause(Capture(meta={}, launches=[traced], breaks=[brk]), traced)["forward_break"] == "0/0"


# --- advice ----------------------------------------------------------------------------------------------

def _report(*occurrences: Occurrence) -> Report:
    """break_disabled_dispatch's gelu_kernel with these eager occurrences beside its own, fla-core known."""
    report = read_report(FIXTURES / "gpu" / "break_disabled_dispatch.json")
    (kernel,) = report.kernels
    kernel = dataclasses.replace(kernel, occurrences=(*kernel.occurrences, *occurrences))
    return dataclasses.replace(report, kernels=(kernel,), libraries=(FLA,))


def _eager(launches: int = 1, **facts: Any) -> Occurrence:
    return Occurrence(None, "runtime", "eager", launches=launches, **facts)


def test_backward_kernels_of_a_library_disabled_forward_name_the_disable_and_whose_it_is() -> None:
    report = _report(_eager(2, backward_of=FORWARD, disabled_by=DISABLE, disabled_library="fla-core"))
    (bwd,) = [a for a in advise(report) if "backward" in a.finding]
    assert bwd.finding == (
        "gelu_kernel ran eagerly 2 times in the backward of ChunkGLAFunction (fla/ops/gla/chunk.py:1377), outside "
        "every compiled graph: its forward's kernels ran inside chunk_gla, which fla-core 0.6.0 disables for "
        "torch.compile itself (torch.compiler.disable at fla/ops/gla/chunk.py:1453).")
    assert "Find what stops Dynamo" not in bwd.action and bwd.library == "fla-core"
    assert bwd.action.startswith("The disable is fla-core 0.6.0's code (installed library, not yours): the library "
                                 "keeps chunk_gla out of torch.compile by design")
    assert "https://github.com/fla-org/flash-linear-attention" in bwd.action


def test_a_backward_whose_forward_has_no_known_cause_says_so_without_guessing() -> None:
    report = _report(_eager(1, backward_of=FORWARD))
    (bwd,) = [a for a in advise(report) if "backward" in a.finding]
    assert bwd.finding.endswith("its forward ran outside every compiled graph, and this report ties no graph break "
                                "or torch.compiler.disable to that forward.")
    assert bwd.library is None and "tritoninspect breaks samples/break_disabled_dispatch.py:Net" in bwd.action


def test_backward_launches_are_not_counted_with_the_forwards_break() -> None:
    # fla's chunk_fwd_kernel_h ran once in chunk_gla's forward and once more (a recompute) in
    # ChunkGLAFunction's backward: "ran eagerly 2 times, after the graph break at fla_liger.py:26".
    report = _report(_eager(2, backward_of=FORWARD, disabled_by=DISABLE, disabled_library="fla-core"))
    (fwd,) = [a for a in advise(report) if "after the graph break" in a.finding]
    assert fwd.finding.startswith("gelu_kernel ran eagerly once, after the graph break at ")


def test_a_forward_after_the_users_call_of_a_library_disabled_function_says_the_disable_is_the_librarys() -> None:
    # The break is at the user's `chunk_gla(...)` line; its hint said "drop the torch.compiler.disable",
    # which is fla-core's (fla/ops/gla/chunk.py:1453), not the user's to drop.
    report = _report()
    (kernel,) = report.kernels
    facts = {"disabled_by": DISABLE, "disabled_library": "fla-core"}
    kernel = dataclasses.replace(kernel, occurrences=tuple(
        dataclasses.replace(o, **facts) if o.stage == "runtime" else o for o in kernel.occurrences))
    (fwd,) = [a for a in advise(dataclasses.replace(report, kernels=(kernel,))) if a.rule == "eager_launches"]
    assert "inside chunk_gla, which fla-core 0.6.0 disables for torch.compile itself (torch.compiler.disable at " \
           "fla/ops/gla/chunk.py:1453)" in fwd.finding
    assert fwd.action.startswith("The disable is fla-core 0.6.0's code (installed library, not yours)")
    assert "drop the torch.compiler.disable" not in fwd.action and fwd.library == "fla-core"
    # The user's own disable keeps the break's hint.
    assert [a.action for a in advise(report) if a.rule == "eager_launches"] == [report.graph_breaks[0].hint]


def test_the_autotuner_follow_on_note_leaves_out_kernels_that_ran_under_a_disable() -> None:
    # fla's chunk_gla kernels were listed: "on a GPU, Dynamo also compiles the frames of Triton's autotuner
    # they run through"; under chunk_gla's (recursive) disable it compiles nothing, on a GPU too.
    from tritoninspect.analyse import build_report
    from tritoninspect.analyse.breaks import compile_only_notes

    capture = Capture.from_json((FIXTURES / "capture_break_pre_hook.json").read_text(encoding="utf-8"))
    breaks = build_report(capture).graph_breaks
    (note,) = compile_only_notes(capture, breaks)
    assert note.message.startswith("autotuned kernels ran eagerly (scale_kernel)")
    capture.launches = [dataclasses.replace(la, disabled=(DISABLE,)) if not la.in_graph else la
                        for la in capture.launches]
    assert compile_only_notes(capture, breaks) == []


# --- a graph break inside the forward ------------------------------------------------------------------

def test_a_backward_run_eagerly_after_a_break_in_its_forward_is_tied_to_that_break(tmp_path: Path) -> None:
    """Liger's LigerSiLUMulFunction in compile-only mode (the newcomer's model, stop 39): the forward breaks
    the graph, so the apply runs eagerly and the backward's kernel launches outside every graph. The
    finding said "this report ties no graph break ... to that forward" beside that very break."""
    import json

    from _expect import run_cli

    asset = Path(__file__).parent / "assets" / "backward_after_forward_break.py"
    run = run_cli(["graph", f"{asset}:Net", "--json"], cwd=tmp_path)  # this checkout's tritoninspect
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(run.stdout)
    (kernel,) = report["kernels"]
    (eager,) = [o for o in kernel["occurrences"] if o["entry"] == "eager"]
    line = _line_of_asset(asset, "FORWARD-BREAK")
    logged = [b["compile_id"] for b in report["graph_breaks"] if b["line"] == line]  # once a compile of the frame
    assert eager["backward_of"].endswith("in Triple.forward") and eager["forward_break"] == logged[0]
    (advice,) = [a for a in report["advice"] if a["rule"] == "eager_launches"]
    assert f"backward_after_forward_break.py:{line}" in advice["finding"]
    assert "ties no graph break" not in advice["finding"]
    assert advice["action"].startswith(f"Remove the graph break at ") and "disable" not in advice["because"]


def test_a_forward_kernel_compiled_after_a_break_in_its_function_says_how_it_goes_with_the_eager_backward(
        tmp_path: Path) -> None:
    """Liger's LigerSiLUMulFunction in compile-only mode (the newcomer's model): `_swiglu_forward_kernel` was a
    `hop` row, "visible", beside a finding that said "the forward ran eagerly". Both were true: the Function's
    `apply` ran eagerly, and Dynamo compiled the forward's own code after the break apart, with grad off (an
    inference graph, no backward). The report now says so in the finding, the verdict and the kernel row."""
    import json

    from _expect import run_cli
    from tritoninspect.render import render_as
    from tritoninspect.render.overview import render_overview

    asset = Path(__file__).parent / "assets" / "forward_kernel_after_break.py"
    run = run_cli(["graph", f"{asset}:Net", "--json"], cwd=tmp_path)  # this checkout's tritoninspect
    assert run.returncode == 0, run.stderr[-2000:]
    data = json.loads(run.stdout)
    kernels = {k["name"]: k for k in data["kernels"]}
    (launch,) = [o for o in kernels["scale_kernel"]["occurrences"] if o["stage"] == "runtime"]
    (eager,) = [o for o in kernels["scale_bwd_kernel"]["occurrences"] if o["stage"] == "runtime"]
    assert (launch["entry"], launch["placement"]) == ("hop", "inference")
    assert launch["inside_forward"] == eager["backward_of"] and launch["inside_forward"].endswith("in Triple.forward")
    (advice,) = [a for a in data["advice"] if a["rule"] == "eager_launches"]
    assert "the forward ran eagerly" not in advice["finding"]
    said = (f"Dynamo still compiled the forward's own code apart, as inference graphs (grad is off in a Function's "
            f"forward) with no backward: scale_kernel in {launch['compile_id']}")
    assert said in advice["finding"], advice["finding"]
    saved = tmp_path / "report.json"
    saved.write_text(run.stdout, encoding="utf-8")
    report = read_report(saved)
    verdict = render_as(report, "detail", color=False, width=1000).split("Verdict\n", 1)[1].splitlines()[0]
    forward_line = _line_of_asset(asset, "def forward(ctx, x)") - 1  # the decorator's: the code's first line
    assert verdict.startswith("scale_kernel: visible to Inductor (hop) in 1 graph; launched inside Triple.forward ("), \
        verdict
    assert verdict.endswith(f"{asset.name}:{forward_line}), which ran outside every compiled graph: Dynamo compiled "
                            f"that forward's own code apart (inference graph {launch['compile_id']}), so no backward "
                            "is compiled with it."), verdict
    assert "inference: - / -" in render_overview(report, color=False, width=120)


def _line_of_asset(path: Path, marker: str) -> int:
    (number,) = [n for n, line in enumerate(path.read_text().splitlines(), 1) if marker in line]
    return number


def test_a_launch_inside_the_users_own_disable_with_no_break_tied_names_that_disable(tmp_path: Path) -> None:
    """`@staticmethod @torch.compiler.disable def forward` (hostile, stop 39): the forward's launch has no graph
    break tied to it (Dynamo's break names `Scale.forward`, not the kernel); the advice said "Find what stops
    Dynamo before the launch" though the occurrence's `disabled_by` names the disable."""
    import json

    from _expect import run_cli

    asset = Path(__file__).parent / "assets" / "user_disabled_forward.py"
    run = run_cli(["graph", f"{asset}:Model", "--json"], cwd=tmp_path)  # this checkout's tritoninspect
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(run.stdout)
    line = _line_of_asset(asset, "USER-DISABLE")
    (forward,) = [a for a in report["advice"] if a["rule"] == "eager_launches" and "backward of" not in a["finding"]]
    assert f"which your code disables for torch.compile (torch.compiler.disable at " in forward["finding"]
    assert forward["action"].startswith("If forward only launches Triton kernels, drop the torch.compiler.disable at ")
    assert f"user_disabled_forward.py:{line}" in forward["action"]  # the line of the disable
    assert "Find what stops Dynamo" not in forward["action"]


def test_a_libraries_disable_inside_the_users_own_is_the_one_that_decides() -> None:
    """`@torch.compiler.disable def attend(...): chunk_gla(...)` (hostile, stop 39): the advice said to drop the
    user's disable, which leaves fla-core's own one keeping the kernels eager."""
    mine = "/w/model.py:12 in attend"
    launch = _launch("k.fwd", ("/w/model.py:14 in attend", f"{CHUNK}:1402 in forward"), (mine, DISABLE))
    capture = Capture(meta={}, launches=[launch], libraries={DISABLE.split(":")[0]: FLA})
    cause = eager_cause(capture, launch)
    assert (cause["disabled_by"], cause["disabled_library"]) == (DISABLE, "fla-core")
    alone = Capture(meta={}, launches=[launch])  # no library known: the outermost, the user's
    assert eager_cause(alone, launch)["disabled_by"] == mine
