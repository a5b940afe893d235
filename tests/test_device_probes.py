"""Compile-only mode's honest `torch.cuda.is_available()` (issue 12): where it answered False to the
user's or a library's code, and the graph breaks that follow such an answer.

Compile-only mode never fakes the answer (Dynamo folds and guards it; a True would send libraries to
CUDA allocations). A library that asks it inside the traced forward takes its no-GPU path there
(Liger-Kernel's `infer_device()` then imports `transformers`, a graph break a GPU run does not have),
so the report lists each such answer and marks the breaks whose traced stack runs through a function
that asked it while traced, where the answer decides a branch or leaves the function before the break
(`GraphBreak.device_probe`), in the text, the JSON and `check`.

Fast tests enter `compile_only()` in process or build records by hand; one slow test runs the
`tests/assets/device_probe.py` asset through the CLI. With a GPU the probe answers True: nothing is
recorded and nothing marked.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import torch

from _expect import REPO, explain, json_report, run_cli
from tritoninspect.analyse import build_report
from tritoninspect.analyse.checks import check_report
from tritoninspect.analyse.emulation import enrich_device_probes, probe_notes
from tritoninspect.model.records import Capture, DeviceProbeRecord, EmulationRecord, LaunchRecord
from tritoninspect.capture.session import compile_only
from tritoninspect.render.breaks import BreaksRenderer
from tritoninspect.render.terminal import TerminalRenderer
from tritoninspect.model.report import DEVICE_PROBE_MEANING, GraphBreak, Report

ASSET = REPO / "tests" / "assets" / "device_probe.py"
NO_GPU = not torch.cuda.is_available()
needs_no_gpu = pytest.mark.skipif(not NO_GPU, reason="a GPU is here: is_available() answers True, no probe to record")


def _line(marker: str, path: Path = ASSET) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if f"# {marker}" in line)


def probing_function() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"  # TEST-PROBE


# --- capture: the watch ------------------------------------------------------------------


@needs_no_gpu
def test_traced_and_eager_answers_are_recorded_with_their_place() -> None:
    here = Path(__file__).resolve()
    original = torch.cuda._is_compiled
    with compile_only() as env:
        assert probing_function() == "cpu"  # eager: this frame
        torch._dynamo.reset()
        compiled = torch.compile(lambda x: x + (1 if probing_function() == "cpu" else 2), backend="eager")
        assert torch.equal(compiled(torch.zeros(2)), torch.ones(2))  # folded: is_available() is still False
        record = env.emulation()  # asks is_available() itself: tritoninspect's question, not recorded
    torch._dynamo.reset()
    assert torch.cuda._is_compiled is original, "the watch was not removed"
    assert record is not None and record.cuda_available is False
    place = f"{here}:{_line('TEST-PROBE', here)}"
    eager = [p for p in record.probes if not p.traced]
    traced = [p for p in record.probes if p.traced]
    assert [(p.place, p.function, p.calls) for p in eager] == [(place, "probing_function", 1)]
    assert [(p.place, p.function) for p in traced] == [(place, "probing_function")]
    assert traced[0].compile_ids == ("0/0",)


def test_torch_s_own_questions_and_a_gpu_are_not_recorded() -> None:
    with compile_only() as env:
        from torch._dynamo.device_interface import get_interface_for_device

        get_interface_for_device("cuda").is_available()  # torch asking for itself
        record = env.emulation()
    assert record is not None and record.probes == ()


# --- analysis, check, text: on records -------------------------------------------------


PROBE_FILE = "/site/liger_kernel/utils.py"


def _capture() -> Capture:
    probes = (
        DeviceProbeRecord(f"{PROBE_FILE}:47", "infer_device", traced=True, calls=2, compile_ids=("0/0", "1/0")),
        DeviceProbeRecord(f"{PROBE_FILE}:47", "infer_device", traced=False, calls=5),
        # Eager only: a function that asked before it was traced marks nothing.
        DeviceProbeRecord("/site/liger_kernel/ops/__init__.py:172", "<module>", traced=False, calls=1),
    )
    capture = Capture(meta={"mode": "compile-only", "target": "m.py:Net", "stage": "dynamo"})
    capture.emulation = EmulationRecord("sm_90", "H100", "NVIDIA H100 80GB HBM3", probes=probes)
    return capture


def _break(cid: str, *stack: str) -> GraphBreak:
    return GraphBreak(cid, "Import failure", "/w/m.py", 32, user_stack=("/w/m.py:32 in forward", *stack),
                      headline="Import failure")


THROUGH = (f"{PROBE_FILE}:140 in infer_device_arch", f"{PROBE_FILE}:50 in infer_device",
           f"{PROBE_FILE}:62 in is_npu_available")


def test_only_breaks_through_a_traced_probing_function_are_marked() -> None:
    breaks = (_break("0/0", *THROUGH), _break("1/0", f"{PROBE_FILE}:140 in infer_device_arch"), _break("2/0"))
    marked = enrich_device_probes(_capture(), {"graph_breaks": breaks})["graph_breaks"]
    assert [b.device_probe for b in marked] == [f"{PROBE_FILE}:47 in infer_device", None, None]
    # A resume function of the probing function is the same function.
    resumed = _break("3/0", f"{PROBE_FILE}:50 in torch_dynamo_resume_in_infer_device_at_47")
    (b,) = enrich_device_probes(_capture(), {"graph_breaks": (resumed,)})["graph_breaks"]
    assert b.device_probe == f"{PROBE_FILE}:47 in infer_device"
    # Without a traced probe nothing is marked (an eager one says nothing about a trace).
    eager_only = _capture()
    eager_only.emulation = dataclasses.replace(eager_only.emulation, probes=eager_only.emulation.probes[1:])
    assert enrich_device_probes(eager_only, {"graph_breaks": breaks}) == {}


def test_the_diagnostic_lists_the_probes_and_warns_when_a_break_follows() -> None:
    cwd = Path("/w")
    breaks = enrich_device_probes(_capture(), {"graph_breaks": (_break("0/0", *THROUGH), _break("2/0"))})["graph_breaks"]
    (warning,) = probe_notes(_capture(), breaks, cwd)
    assert (warning.severity, warning.source) == ("warning", "compile-only")
    assert "while Dynamo traced: liger_kernel/utils.py:47 in infer_device (×2, compile 0/0, 1/0)" not in warning.message
    assert f"while Dynamo traced: {PROBE_FILE}:47 in infer_device (×2, compile 0/0, 1/0)" in warning.message
    assert "run eagerly: " in warning.message and "ops/__init__.py:172 in <module> (×1)" in warning.message
    assert f"1 graph break follows such a probe (marked: it {DEVICE_PROBE_MEANING})" in warning.message
    launched = _capture()
    launched.launches = [LaunchRecord("jit", "k", None, None, False, None)]
    (note,) = probe_notes(launched, (_break("2/0"),), cwd)
    assert note.severity == "note" and note.message.endswith("no graph break follows one")
    # No user kernel launched: the answer may be why, and the diagnostic says so.
    (quiet,) = probe_notes(_capture(), (_break("2/0"),), cwd)
    assert quiet.severity == "warning"
    assert quiet.message.endswith("no graph break follows one; no user kernel launched in this run: a GPU run may "
                                  "launch kernels there")
    assert probe_notes(Capture(), breaks) == []


def test_a_report_without_kernels_after_an_availability_probe_says_so() -> None:
    from tritoninspect.render._format import no_kernels_text

    text = no_kernels_text(build_report(_capture()))
    assert text.startswith("no user-defined Triton kernels were seen: compile-only mode answered "
                           "torch.cuda.is_available() False to the code")


def _report() -> Report:
    capture = _capture()
    report = build_report(capture)
    breaks = enrich_device_probes(capture, {"graph_breaks": (_break("0/0", *THROUGH), _break("2/0"))})["graph_breaks"]
    return dataclasses.replace(report, graph_breaks=breaks)


def test_check_fails_and_says_which_breaks_follow_a_probe() -> None:
    (failure,) = check_report(_report(), no_breaks=True)
    assert failure.startswith("--no-breaks: 2 graph breaks (1 of them after a device probe answered for the CPU "
                              "in compile-only mode: a GPU run may not break there; check on a GPU): ")
    assert f"[0/0] /w/m.py:32 Import failure (after the device probe at {PROBE_FILE}:47 in infer_device)" in failure
    assert "[2/0] /w/m.py:32 Import failure;" in failure + ";"
    (one,) = check_report(dataclasses.replace(_report(), graph_breaks=_report().graph_breaks[:1]), no_breaks=True)
    assert one.startswith("--no-breaks: 1 graph break (after a device probe answered for the CPU ")
    (graphs,) = check_report(dataclasses.replace(_report(), graphs=()), max_graphs=-1)
    # The head counts graphs there: "1 of them" would count a graph; it names the break.
    assert graphs.startswith("--max-graphs -1: 0 Dynamo graphs () (1 graph break after a device probe answered")


def test_the_field_round_trips_and_the_text_says_what_it_means() -> None:
    report = _report()
    again = Report.from_json(report.to_json())
    assert [b.device_probe for b in again.graph_breaks] == [f"{PROBE_FILE}:47 in infer_device", None]
    text = " ".join(TerminalRenderer(width=400).render(report).split())
    assert "graph breaks: 2 (1 after a compile-only device probe)" in text
    assert f"Import failure · {DEVICE_PROBE_MEANING}" in text
    breaks_text = " ".join(BreaksRenderer().render(report).split())
    assert f"{DEVICE_PROBE_MEANING} (torch.cuda.is_available() answered False at" in breaks_text


# --- end to end --------------------------------------------------------------------------


@pytest.mark.slow
def test_the_asset_s_probe_break_is_marked_and_the_plain_one_not(tmp_path: Path) -> None:
    proc = run_cli(["graph", f"{ASSET.relative_to(REPO)}:Net", "--stage", "dynamo", "--device", "cpu", "--json"])
    rep = json_report(proc)
    probe_place = f"{ASSET}:{_line('PROBE')} in pick_device"
    by_line = {}
    for b in rep["graph_breaks"]:
        by_line.setdefault(b["line"], set()).add(b["device_probe"])
    if not NO_GPU:
        assert _line("NO-GPU-PATH") not in by_line and by_line == {_line("PLAIN-BREAK"): {None}}
        return
    assert by_line == {_line("NO-GPU-PATH"): {probe_place}, _line("PLAIN-BREAK"): {None}}, by_line
    (warning,) = [d for d in rep["diagnostics"] if "is_available() answered False" in d["message"]]
    assert warning["severity"] == "warning"
    assert f"device_probe.py:{_line('IMPORT-PROBE')} in <module> (×1)" in warning["message"]
    saved = tmp_path / "report.json"
    saved.write_text(json.dumps(rep))
    check = run_cli(["check", str(saved), "--no-breaks"])
    assert check.returncode == 1, explain(check)
    marked = sum(b["device_probe"] is not None for b in rep["graph_breaks"])
    assert f"({marked} of them after a device probe answered for the CPU in compile-only mode" in check.stdout


def test_the_watch_point_is_where_this_torch_asks() -> None:
    """`is_available()` asks the module global `_is_compiled` first (torch 2.11-2.14): the watch
    replaces that global, never `is_available` itself, which Dynamo folds and guards by identity."""
    from tritoninspect.capture.compat.device_probes import availability_watch

    assert "_is_compiled" in torch.cuda.is_available.__code__.co_names
    ((module, name, watcher),) = availability_watch(lambda probe: None)
    assert (module, name) == (torch.cuda, "_is_compiled")
    assert watcher() == torch.cuda._is_compiled()  # the same answer, for any caller
    is_available, original = torch.cuda.is_available, torch.cuda._is_compiled
    with compile_only():
        assert torch.cuda.is_available is is_available and torch.cuda._is_compiled is not original
    assert torch.cuda._is_compiled is original


def test_check_says_a_break_logged_in_several_frames_once() -> None:
    # Found by the newcomer pass (h20): a Liger block's one break, logged in frames 0/0 to 5/0,
    # made a --no-breaks line repeating the same place and probe six times.
    report = _report()
    same = dataclasses.replace(report, graph_breaks=(report.graph_breaks[1], dataclasses.replace(
        report.graph_breaks[1], compile_id="3/0")))
    (failure,) = check_report(same, no_breaks=True)
    assert failure.endswith(": [2/0, 3/0] /w/m.py:32 Import failure"), failure


# --- a failure after a probe -----------------------------------------------------------------


FAILING = REPO / "tests" / "assets" / "failures" / "probe_then_fail.py"


def test_a_failure_after_a_probe_turns_the_note_into_a_warning_that_names_it() -> None:
    from tritoninspect.model.records import Failure

    capture = _capture()
    capture.failure = Failure(stage="backward", compile_id=None, part="", exc_type="UnboundLocalError",
                                    message="cannot access local variable 'NUM_SMS'")
    (warning,) = probe_notes(capture, ())
    assert warning.severity == "warning"
    assert "the run failed after it (backward): a GPU run may not fail there" in warning.message


@pytest.mark.skipif(not NO_GPU, reason="a GPU is here: the helper gets its GPU answer and nothing fails")
def test_a_model_failing_on_its_no_gpu_path_says_so_on_the_failure(tmp_path: Path) -> None:
    from tritoninspect.analyse.emulation import FAILURE_AFTER_PROBE

    text = run_cli(["graph", str(FAILING.relative_to(REPO)), "--device", "cpu", "-q"])
    assert text.returncode == 4, explain(text)
    assert FAILURE_AFTER_PROBE in " ".join(text.stdout.split())  # on the failure, however the text wraps
    (error,) = [line for line in text.stderr.splitlines() if line.startswith("error:")]
    assert FAILURE_AFTER_PROBE in error
    out = tmp_path / "r.json"
    rerun = run_cli(["graph", str(FAILING.relative_to(REPO)), "--device", "cpu", "-o", str(out)])
    assert rerun.returncode == 4, explain(rerun)
    saved = run_cli(["graph", str(out)])  # a saved report says it too: it is read from the report
    assert FAILURE_AFTER_PROBE in " ".join(saved.stdout.split()), explain(saved)


def test_a_failure_with_no_probe_says_nothing_of_probes() -> None:
    from tritoninspect.analyse.emulation import FAILURE_AFTER_PROBE, failure_caveat, failure_follows_probe
    from tritoninspect.render._failure import failure_line
    from tritoninspect.model.report import Failure

    failure = Failure("run", None, "", "TypeError", "boom")
    plain = dataclasses.replace(build_report(Capture(meta={"mode": "compile-only"})), failure=failure)
    assert not failure_follows_probe(plain) and failure_caveat(plain) is None
    assert FAILURE_AFTER_PROBE not in failure_line(failure, caveat=failure_caveat(plain))
    assert failure_follows_probe(dataclasses.replace(_report(), failure=failure))
    assert not failure_follows_probe(_report())  # probes, but nothing failed


# --- a tensor's device asked (issue 22 item 4) -----------------------------------------------


TENSOR_ASSET = REPO / "tests" / "assets" / "tensor_device_probe.py"


def probes_a_tensor(x: torch.Tensor) -> int:
    if x.is_cuda:  # TENSOR-IS-CUDA
        return 2
    y = torch.empty(2, device=x.device)  # DEVICE-NO-PROBE
    return 1 + y.numel() - 2


def compiled_probe(x: torch.Tensor) -> torch.Tensor:
    return x * 2 if x.device.type == "cuda" else x + 1  # TENSOR-DEVICE-TYPE


def test_a_tensor_s_device_asked_eagerly_and_traced_is_recorded_with_its_place() -> None:
    """torchnorm's RMSNorm takes its PyTorch path on `x.is_cuda` (False for compile-only mode's CPU
    tensors): each such question from the user's or a library's code is recorded, eager and traced,
    and a device read that asks nothing (`device=x.device`) is not."""
    here = Path(__file__).resolve()
    x = torch.zeros(2)
    with compile_only() as env:
        assert probes_a_tensor(x) == 1
        torch._dynamo.reset()
        assert torch.equal(torch.compile(compiled_probe, backend="eager")(x), x + 1)
        record = env.emulation()
    torch._dynamo.reset()
    assert "is_cuda" not in torch.Tensor.__dict__ and "device" not in torch.Tensor.__dict__, "the watch stayed"
    assert record is not None
    found = {(p.place, p.function, p.traced, p.asked) for p in record.probes if p.asked != "torch.cuda.is_available()"}
    assert found == {
        (f"{here}:{_line('TENSOR-IS-CUDA', here)}", "probes_a_tensor", False, "x.is_cuda"),
        (f"{here}:{_line('TENSOR-DEVICE-TYPE', here)}", "compiled_probe", True, "x.device.type"),
    }


def _tensor_capture(launches: int) -> Capture:
    from tritoninspect.model.records import LaunchRecord

    probes = (DeviceProbeRecord("/site/torchnorm/rms_norm.py:40", "forward", traced=True, calls=1,
                                compile_ids=("0/0",), asked="x.is_cuda"),)
    capture = Capture(meta={"mode": "compile-only", "target": "m.py:Net", "stage": "inductor"})
    capture.emulation = EmulationRecord("sm_90", "H100", "NVIDIA H100 80GB HBM3", probes=probes)
    capture.launches = [LaunchRecord("jit", "k", None, None, False, None)] * launches
    return capture


def test_a_report_without_kernels_says_which_tensor_probe_may_be_why() -> None:
    from tritoninspect.analyse.emulation import TENSOR_PROBE_NOTE
    from tritoninspect.render._format import no_kernels_text

    report = build_report(_tensor_capture(0))
    (warning,) = [d for d in report.diagnostics if d.message.startswith(TENSOR_PROBE_NOTE)]
    assert warning.severity == "warning" and "torchnorm/rms_norm.py:40 in forward (x.is_cuda ×1" in warning.message
    assert not any(d.message.startswith("torch.cuda.is_available()") for d in report.diagnostics)
    text = no_kernels_text(report)
    assert text.startswith("no user-defined Triton kernels were seen: compile-only mode runs on CPU tensors")
    assert "torchnorm/rms_norm.py:40 in forward" in text and "a GPU run may launch kernels there" in text
    assert "torchnorm/rms_norm.py:40" in " ".join(TerminalRenderer(width=400).render(report).split())
    (note,) = [d for d in build_report(_tensor_capture(1)).diagnostics if d.message.startswith(TENSOR_PROBE_NOTE)]
    assert note.severity == "note"
    assert no_kernels_text(build_report(Capture(meta={"mode": "compile-only"}))) == "no user-defined Triton kernels were seen"


@pytest.mark.slow
def test_a_model_whose_kernels_wait_for_cuda_tensors_says_so() -> None:
    proc = run_cli(["graph", f"{TENSOR_ASSET.relative_to(REPO)}:Net", "--device", "cpu", "--json"])
    assert proc.returncode == 0, explain(proc)
    rep = json_report(proc)
    assert rep["kernels"] == []
    (warning,) = [d for d in rep["diagnostics"] if d["source"] == "compile-only"]
    assert warning["severity"] == "warning"
    for marker, function, asked in (("TRACED-PROBE", "forward", "x.device.type"), ("EAGER-PROBE", "double", "x.is_cuda")):
        assert f"tensor_device_probe.py:{_line(marker, TENSOR_ASSET)} in {function} ({asked} ×1" in warning["message"]
    assert f":{_line('NOT-A-PROBE', TENSOR_ASSET)} " not in warning["message"]
    text = run_cli(["graph", f"{TENSOR_ASSET.relative_to(REPO)}:Net", "--device", "cpu"])
    assert "compile-only mode runs on CPU tensors, and the code asked a tensor whether it is on CUDA" in " ".join(
        text.stdout.split())


def test_a_failure_at_a_tensor_device_check_says_a_gpu_run_does_not_fail_there() -> None:
    """fla's FusedCrossEntropyLoss asserts its inputs are on cuda: the failure line said nothing of
    compile-only mode, while the tensor-probe note named that very line."""
    from tritoninspect.analyse.emulation import FAILURE_AFTER_TENSOR_PROBE, FAILURE_AT_TENSOR_PROBE, failure_caveat
    from tritoninspect.model.records import Failure as FailureRecord

    capture = _tensor_capture(0)
    capture.failure = FailureRecord(stage="run", compile_id=None, part="", exc_type="AssertionError",
                                    message="Only support CUDA/NPU/XPU tensors",
                                    torch_frame="/site/torchnorm/rms_norm.py:40 in forward")
    assert failure_caveat(build_report(capture)) == FAILURE_AT_TENSOR_PROBE
    capture.failure = dataclasses.replace(capture.failure, torch_frame="/site/torchnorm/rms_norm.py:90 in forward")
    assert failure_caveat(build_report(capture)) == FAILURE_AFTER_TENSOR_PROBE


# --- the watches, reached by code Dynamo runs eagerly ------------------------------------------


EAGER_ASSET = REPO / "tests" / "assets" / "eager_device_probes.py"


def _import_asset(path: Path) -> Any:
    """The asset, imported before compile-only mode (the API's documented order)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_tritoninspect_test_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _plain_dynamo_breaks(module: Any, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Where `torch._dynamo.explain` breaks the asset in compile-only mode with the device watches off
    (what a run without tritoninspect's probes has), as (file, line) of the innermost user frame."""
    from tritoninspect.capture import compat

    with monkeypatch.context() as off:
        off.setattr(compat.device_probes, "availability_watch", lambda on_probe: [])
        off.setattr(compat.device_probes, "tensor_device_watch", lambda on_probe: [])
        torch._dynamo.reset()
        with compile_only():
            explained = torch._dynamo.explain(module.Net())(*module.example_inputs())
    torch._dynamo.reset()
    return [(r.user_stack[-1].filename, r.user_stack[-1].lineno) for r in explained.break_reasons]


@needs_no_gpu
def test_watches_run_eagerly_under_dynamo_add_no_break_of_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Found on a model whose assert on `x.is_cuda` failed while Dynamo traced it: Dynamo ran the rest of
    the frame eagerly with its frame callback on, compiled the tool's `x.is_cuda` watch as a frame of the
    model's and broke in it (and in the realpath it calls), and the report listed both breaks as the
    model's. The asset's `prepare` runs eagerly that way: the breaks listed are exactly plain Dynamo's,
    and both probes there are still recorded."""
    from tritoninspect import inspect_module

    module = _import_asset(EAGER_ASSET)
    expected = _plain_dynamo_breaks(module, monkeypatch)
    assert expected == [(str(EAGER_ASSET), _line("THE-BREAK", EAGER_ASSET))]
    report = inspect_module(module.Net(), module.example_inputs(), device="cpu", stage="dynamo")
    torch._dynamo.reset()
    assert [(b.file, b.line) for b in report.graph_breaks] == expected
    assert [d.message for d in report.diagnostics if d.source == "tritoninspect"] == []
    notes = " ".join(d.message for d in report.diagnostics if d.source == "compile-only")
    for marker, asked in (("EAGER-IS-AVAILABLE", ""), ("EAGER-IS-CUDA", "x.is_cuda ")):
        assert f"eager_device_probes.py:{_line(marker, EAGER_ASSET)} in prepare ({asked}×1)" in notes, notes


def test_a_break_dynamo_takes_in_tritoninspect_s_own_code_is_said_as_the_tool_s() -> None:
    """Should Dynamo compile one of the tool's hooks again, the break it logs there is not listed as the
    model's: a warning names it as a bug in tritoninspect. (The recorder fed the artifact Dynamo logged for
    the `x.is_cuda` watch before it was kept from being compiled, its paths made this checkout's.)"""
    import logging

    from tritoninspect.capture.recorder import Recorder

    hook = Path(compat_dir()) / "device_probes.py"
    payload = (f"Graph break in user code at {hook}:174\nGraph Break Reason: Observed exception\n\nUser code traceback:\n"
               f'  File "{EAGER_ASSET}", line {_line("EAGER-IS-CUDA", EAGER_ASSET)}, in prepare\n'
               f'  File "{hook}", line 174, in read\n')
    recorder = Recorder("dynamo", compile_only=True)
    for frame_id, at in ((2, f"{hook}:174"), (3, f"{EAGER_ASSET}:{_line('THE-BREAK', EAGER_ASSET)}")):
        record = logging.makeLogRecord({
            "metadata": {"artifact": {"name": "dynamo_graph_break_reason", "encoding": "string"},
                         "frame_id": frame_id, "frame_compile_id": 0},
            "payload": payload.replace(f"at {hook}:174", f"at {at}"),
        })
        recorder._on_trace(record)
    assert [(b.compile_id, b.file) for b in recorder.capture.breaks] == [("3/0", str(EAGER_ASSET))]
    ((source, message),) = recorder.capture.problems
    assert source == "tritoninspect" and message.startswith("[2/0] Dynamo compiled tritoninspect's own code")
    assert f"({hook}:174)" in message and "a bug in tritoninspect" in message


def compat_dir() -> str:
    from tritoninspect.capture import compat

    return str(Path(compat.__file__).resolve().parent)


# --- a break is marked only where the probe's answer can lead to it ---------------------------------


USES_ASSET = REPO / "tests" / "assets" / "device_probe_uses.py"

#: Functions asking `torch.cuda.is_available()` (on the PROBE line) and what their answer decides.
PROBING = '''import torch


def decides():
    if not torch.cuda.is_available():  # PROBE
        torch._dynamo.graph_break()


def through_a_name(x):
    on_gpu = torch.cuda.is_available()  # PROBE
    ok = x.is_cuda and on_gpu
    while not ok:  # BRANCH
        ok = True


def short_circuit():
    return torch.cuda.is_available() or load_cpu_kernels()  # PROBE


def passed_on(self):
    self.on_gpu = torch.cuda.is_available()  # PROBE


def dropped():
    torch.cuda.is_available()  # PROBE


def printed():
    print(f"GPU: {torch.cuda.is_available()}")  # PROBE


def tested_later():
    on_gpu = torch.cuda.is_available()  # PROBE
    torch._dynamo.graph_break()
    return 2 if on_gpu else 1  # BRANCH
'''


@pytest.mark.parametrize(("function", "kinds"), [
    ("decides", {"branch": "PROBE"}), ("through_a_name", {"branch": "BRANCH"}), ("short_circuit", {"branch": "PROBE"}),
    ("passed_on", {"passed": "PROBE"}), ("dropped", {}), ("printed", {}), ("tested_later", {"branch": "BRANCH"}),
])
def test_what_a_probe_s_answer_decides_is_read_from_its_function(function: str, kinds: dict[str, str]) -> None:
    from tritoninspect.textformats.value_use import probe_uses

    lines = PROBING.splitlines()
    start = lines.index(next(line for line in lines if line.startswith(f"def {function}(")))
    line_of = {marker: next(n for n, line in enumerate(lines[start:], start + 1) if f"# {marker}" in line)
               for marker in set(kinds.values()) | {"PROBE"}}
    assert probe_uses(PROBING, line_of["PROBE"]) == {kind: line_of[marker] for kind, marker in kinds.items()}


def test_what_a_probe_s_answer_decides_is_unknown_without_its_call() -> None:
    from tritoninspect.textformats.value_use import probe_uses

    assert probe_uses(PROBING, 1) is None  # no function there
    assert probe_uses(PROBING, PROBING.splitlines().index("    ok = x.is_cuda and on_gpu") + 1) is None
    assert probe_uses("def f(:", 1) is None


def _probe_capture(uses: dict[str, int] | None) -> Capture:
    capture = _capture()
    probe = DeviceProbeRecord(f"{PROBE_FILE}:47", "infer_device", traced=True, calls=1, compile_ids=("0/0",), uses=uses)
    capture.emulation = dataclasses.replace(capture.emulation, probes=(probe,))
    return capture


@pytest.mark.parametrize(("uses", "marked"), [
    ({"branch": 47}, True),  # Liger's `if torch.cuda.is_available(): return "cuda"` before the break's line 50
    ({"passed": 48}, True),  # handed on before the break: where it goes is not followed
    (None, True),  # not known (no source when captured): marked, and the note says it could not tell
    ({}, False),  # unused, or only printed
    ({"branch": 60}, False),  # tested only after the break
])
def test_a_break_is_marked_only_where_the_probe_s_answer_can_lead_to_it(uses: dict[str, int] | None,
                                                                        marked: bool) -> None:
    capture = _probe_capture(uses)
    breaks = (_break("0/0", f"{PROBE_FILE}:50 in infer_device"),)
    enriched = enrich_device_probes(capture, {"graph_breaks": breaks})["graph_breaks"]
    assert [b.device_probe for b in enriched] == [f"{PROBE_FILE}:47 in infer_device" if marked else None]
    (warning,) = probe_notes(capture, enriched, Path("/w"))
    said = "1 graph break follows one whose answer decides no path to it (not marked)"
    assert (said in warning.message) is not marked
    assert (f"1 graph break follows such a probe (marked: it {DEVICE_PROBE_MEANING})" in warning.message) is marked
    unknown = "for 1 of them what the answer decides is not known (its source was not read)"
    assert (unknown in warning.message) is (uses is None)


@pytest.mark.parametrize(("uses", "said"), [({"passed": 48}, True), ({"branch": 47}, False), ({}, False)])
def test_a_break_after_an_answer_handed_out_of_its_function_is_not_said_to_follow_none(
        uses: dict[str, int], said: bool) -> None:
    """`def on_gpu(): return torch.cuda.is_available()` and, in the caller, `if on_gpu(): ... else: print(...)`
    (hostile, stop 39): the break is off on_gpu's stack, so it is not marked, but the note said "no graph
    break follows one". Now it says the answer left the function and the capture does not follow it there."""
    capture = _probe_capture(uses)
    breaks = (_break("0/0", "/w/model.py:29 in forward"), _break("1/0", "/w/model.py:40 in forward"))
    enriched = enrich_device_probes(capture, {"graph_breaks": breaks})["graph_breaks"]
    assert [b.device_probe for b in enriched] == [None, None]
    (warning,) = probe_notes(capture, enriched, Path("/w"))
    handed = ("1 graph break in the same compile comes after an answer that left infer_device (returned or passed "
              "on), which this capture does not follow")
    assert (handed in warning.message) is said
    assert ("no graph break follows one" in warning.message) is not said


@needs_no_gpu
def test_only_the_break_the_probe_s_answer_leads_to_is_marked() -> None:
    """`pick_device` branches on the answer before its break; `log_device` and `note_device` break
    whatever the answer (the asset's docstring)."""
    from tritoninspect import inspect_module

    module = _import_asset(USES_ASSET)
    report = inspect_module(module.Net(), module.example_inputs(), device="cpu", stage="dynamo")
    torch._dynamo.reset()
    by_line: dict[int, set[str | None]] = {}
    for b in report.graph_breaks:
        by_line.setdefault(b.line, set()).add(b.device_probe)
    assert by_line == {
        _line("NO-GPU-PATH", USES_ASSET): {f"{USES_ASSET}:{_line('DECIDES', USES_ASSET)} in pick_device"},
        _line("AFTER-UNUSED", USES_ASSET): {None},
        _line("AFTER-DROPPED", USES_ASSET): {None},
    }, by_line
    (warning,) = [d for d in report.diagnostics if d.message.startswith("torch.cuda.is_available() answered False")]
    assert "graph breaks follow one whose answer decides no path to them (not marked)" in warning.message


# --- a tensor's device probe marks the breaks its answer leads to (hostile, finding E) ------------------


TENSOR_BREAKS_ASSET = REPO / "tests" / "assets" / "tensor_probe_breaks.py"

#: Functions asking a tensor's device (on the PROBE line) and what their answer decides.
TENSOR_PROBING = '''import torch


def is_cuda_branch(x):
    if _TRITON and x.is_cuda:  # PROBE
        return kernel(x)
    return x * 2


def through_a_name(x):
    on_gpu = x.device.type == "cuda"  # PROBE
    torch._dynamo.graph_break()
    return 2 if on_gpu else 1  # BRANCH


def passed_on(self, x):
    self.on_gpu = x.device != torch.device("cuda")  # PROBE


def printed(x):
    print(x.is_cuda, x.device.type == "cuda")  # PROBE


def not_a_probe(x):
    return torch.empty(2, device=x.device)  # PROBE
'''


@pytest.mark.parametrize(("function", "asked", "kinds"), [
    ("is_cuda_branch", "x.is_cuda", {"branch": "PROBE"}),
    ("through_a_name", "x.device.type", {"branch": "BRANCH"}),
    ("passed_on", "x.device.type", {"passed": "PROBE"}),
    ("printed", "x.is_cuda", {}),
    ("printed", "x.device.type", {}),
])
def test_what_a_tensor_probe_s_answer_decides_is_read_from_its_function(function: str, asked: str,
                                                                         kinds: dict[str, str]) -> None:
    from tritoninspect.textformats.value_use import probe_uses

    lines = TENSOR_PROBING.splitlines()
    start = lines.index(next(line for line in lines if line.startswith(f"def {function}(")))
    line_of = {marker: next(n for n, line in enumerate(lines[start:], start + 1) if f"# {marker}" in line)
               for marker in set(kinds.values()) | {"PROBE"}}
    assert probe_uses(TENSOR_PROBING, line_of["PROBE"], asked) == {kind: line_of[m] for kind, m in kinds.items()}


def test_a_line_without_the_tensor_probe_asked_has_no_known_uses() -> None:
    from tritoninspect.textformats.value_use import probe_uses

    line = TENSOR_PROBING.splitlines().index("    return torch.empty(2, device=x.device)  # PROBE") + 1
    assert probe_uses(TENSOR_PROBING, line, "x.device.type") is None
    assert probe_uses(TENSOR_PROBING, line, "x.is_cuda") is None
    assert probe_uses(TENSOR_PROBING, line, "something else") is None


def test_a_break_on_the_cpu_path_of_a_tensor_device_probe_is_marked() -> None:
    """Dynamo folds `x.is_cuda` and `x.device.type == "cuda"` into constants from the (fake) tensor's
    device, as it folds `is_available()`: neither breaks the graph itself, on any device, but on compile-only
    mode's CPU tensors the path after them is the CPU's, and a break there is one a GPU run may not have.
    Only a traced `is_available()` marked its breaks: a tensor probe's were left unmarked (the count line
    said "graph breaks: 3" and nothing about probes), and a probe asked in a resume function
    (`torch_dynamo_resume_in_forward_at_N`) was not found on the break's stack, which names `forward`."""
    from tritoninspect import inspect_module

    module = _import_asset(TENSOR_BREAKS_ASSET)
    report = inspect_module(module.Net(), module.example_inputs(), device="cpu", stage="dynamo")
    torch._dynamo.reset()
    by_line: dict[int, set[str | None]] = {}
    for b in report.graph_breaks:
        by_line.setdefault(b.line, set()).add(b.device_probe)
    place = f"{TENSOR_BREAKS_ASSET}:{{}}"
    assert by_line == {
        _line("CPU-PATH", TENSOR_BREAKS_ASSET): {f"{place.format(_line('IS-CUDA', TENSOR_BREAKS_ASSET))} in scale"},
        _line("SHOWN", TENSOR_BREAKS_ASSET): {None},  # the print of the answer breaks
        _line("AFTER-SHOWN", TENSOR_BREAKS_ASSET): {None},
        _line("PLAIN-BREAK", TENSOR_BREAKS_ASSET): {None},
        _line("PRINT-PATH", TENSOR_BREAKS_ASSET): {f"{place.format(_line('DEVICE-TYPE', TENSOR_BREAKS_ASSET))} in forward"},
    }, by_line
    (warning,) = [d for d in report.diagnostics if d.message.startswith("a tensor's device answered cpu")]
    assert warning.severity == "warning"
    assert f"3 graph breaks follow such a probe (each marked: it {DEVICE_PROBE_MEANING})" in warning.message
    assert "graph breaks follow one whose answer decides no path to them (not marked)" in warning.message
    assert "torch_dynamo_resume" not in warning.message


def test_a_tensor_probe_s_marked_break_makes_its_note_a_warning_and_is_not_counted_as_availability_s() -> None:
    capture = _tensor_capture(1)  # a kernel launched: without a marked break, a note
    probe = dataclasses.replace(capture.emulation.probes[0], uses={"branch": 40})
    capture.emulation = dataclasses.replace(capture.emulation, probes=(probe,))
    breaks = (GraphBreak("0/0", "Import failure", "/site/torchnorm/rms_norm.py", 44, headline="Import failure",
                         user_stack=("/w/m.py:9 in forward", "/site/torchnorm/rms_norm.py:44 in forward")),)
    enriched = enrich_device_probes(capture, {"graph_breaks": breaks})["graph_breaks"]
    assert [b.device_probe for b in enriched] == ["/site/torchnorm/rms_norm.py:40 in forward"]
    (note,) = probe_notes(capture, enriched, Path("/w"))
    assert note.severity == "warning" and note.message.startswith("a tensor's device answered cpu")
    assert note.message.endswith(f"1 graph break follows such a probe (marked: it {DEVICE_PROBE_MEANING})")
    from tritoninspect.analyse.emulation import tensor_probe_places

    # What the note says of the breaks comes after its places, which the failure and no-kernel texts read.
    report = dataclasses.replace(build_report(capture), diagnostics=(note,))
    assert tensor_probe_places(report) == "while Dynamo traced: /site/torchnorm/rms_norm.py:40 in forward (x.is_cuda ×1, compile 0/0)"


def test_a_probe_in_a_resume_function_is_recorded_as_the_user_s_function() -> None:
    from tritoninspect.capture.compat.device_probes import IS_CUDA, Probe
    from tritoninspect.capture.session import Environment

    env = Environment()
    env.probed(Probe("/w/m.py:15", "torch_dynamo_resume_in_forward_at_14", traced=True, compile_id="3/0", asked=IS_CUDA))
    assert list(env.probes) == [("/w/m.py:15", "forward", True, IS_CUDA)]


# --- tensor subclasses: Dynamo looks the watched attributes up on the class ----------------------------


SUBCLASS_ASSET = REPO / "tests" / "assets" / "subclass_device_probes.py"


def test_the_class_s_own_attribute_is_torch_s_descriptor_while_watched() -> None:
    """Dynamo's tensor-subclass path reads `getattr(torch.Tensor, "is_cuda").__get__` and compares
    `inspect.getattr_static(type(x), "is_cuda")` with `getattr(torch.Tensor, "is_cuda")`; torch's C getter
    hands a subclass's `__torch_function__` `torch.Tensor.is_cuda.__get__`. Each sees torch's own
    descriptor while the watch is on, as without it."""
    import inspect

    seen = []

    class Seen(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            seen.append(func)
            return super().__torch_function__(func, types, args, kwargs or {})

    x = torch.zeros(2).as_subclass(Seen)
    with compile_only():
        for name in ("is_cuda", "device"):
            original = torch._C.TensorBase.__dict__[name]
            assert name in torch.Tensor.__dict__, "not watched"
            assert getattr(torch.Tensor, name) is original and getattr(Seen, name) is original
            assert inspect.getattr_static(Seen, name) == original
            assert not inspect.getattr_static(Seen, name) != original
            getattr(x, name)
            assert seen.pop() == original.__get__  # what __torch_function__ gets without the watch
        with pytest.raises(AttributeError):
            x.is_cuda = True  # type: ignore[misc]
    assert "is_cuda" not in torch.Tensor.__dict__


def test_tensor_subclass_inputs_break_where_plain_dynamo_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Found on a `__torch_function__` subclass reading `x.is_cuda` in forward: Dynamo's subclass path
    looked the attribute up on `torch.Tensor`, found the watch's property, could not wrap it ("Unexpected type
    in sourceless builder") and skipped the whole frame, a break plain Dynamo does not have. The asset reads
    `.is_cuda` and `.device` of a `__torch_function__` subclass and of a torchao-style wrapper subclass."""
    from tritoninspect import inspect_module

    module = _import_asset(SUBCLASS_ASSET)
    expected = _plain_dynamo_breaks(module, monkeypatch)
    assert expected == []
    report = inspect_module(module.Net(), module.example_inputs(), device="cpu", stage="dynamo")
    torch._dynamo.reset()
    assert [(b.file, b.line) for b in report.graph_breaks] == expected
    assert len(report.graphs) == 1
    assert [d.message for d in report.diagnostics if d.source == "tritoninspect"] == []
    notes = " ".join(d.message for d in report.diagnostics if d.source == "compile-only")
    for marker, asked in (("LOGGED-IS-CUDA", "x.is_cuda"), ("WRAPPED-DEVICE-TYPE", "x.device.type"),
                          ("WRAPPED-IS-CUDA", "x.is_cuda")):
        place = f"subclass_device_probes.py:{_line(marker, SUBCLASS_ASSET)} in forward"
        assert f"{place} ({asked} ×1, compile 0/0)" in notes, notes
    assert f":{_line('NOT-A-PROBE', SUBCLASS_ASSET)} " not in notes and "__torch_function__" not in notes


def test_a_subclass_s_read_is_placed_where_it_was_asked_not_in_its_dispatch() -> None:
    """Dynamo inlines a subclass's `__torch_function__` (and torch's, which it calls with super()) between
    the line that read `x.is_cuda` and the getter: the probe is the reading line's. A `__torch_function__`
    that reads the attribute itself is where it was asked."""
    from traceback import FrameSummary

    from tritoninspect.capture.compat.device_probes import DEVICE_TYPE, IS_CUDA, _asking_frame

    forward = FrameSummary("/w/m.py", 7, "forward", line="if y.is_cuda and x.device.type == 'cuda':")
    dispatch = [FrameSummary("/w/m.py", 3, "__torch_function__", line="return super().__torch_function__(func, types)"),
                FrameSummary("/site/torch/_tensor.py", 1530, "__torch_function__", line="ret = func(*args, **kwargs)")]
    for asked in (IS_CUDA, DEVICE_TYPE):
        assert _asking_frame([forward, *dispatch], asked) is forward
        assert _asking_frame([forward], asked) is forward
    asks = FrameSummary("/w/m.py", 4, "__torch_function__", line="if args[0].is_cuda:")
    assert _asking_frame([forward, asks, *dispatch], IS_CUDA) is asks
    assert _asking_frame([forward, asks, *dispatch], DEVICE_TYPE) is forward
    assert _asking_frame(dispatch, IS_CUDA) is None and _asking_frame([], IS_CUDA) is None


@pytest.mark.slow
def test_graph_of_a_tensor_subclass_model_has_no_break_of_the_tool_s() -> None:
    proc = run_cli(["graph", f"{SUBCLASS_ASSET.relative_to(REPO)}:Net", "--stage", "dynamo", "--device", "cpu", "--json"])
    assert proc.returncode == 0, explain(proc)
    rep = json_report(proc)
    assert rep["graph_breaks"] == [] and len(rep["graphs"]) == 1
    assert [k["name"] for k in rep["kernels"]] == ["double_kernel"]
    assert [d for d in rep["diagnostics"] if d["source"] == "tritoninspect"] == []
