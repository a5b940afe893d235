"""CUDA graphs (`graph --cudagraphs`, issue 24 item 6) and epilogue fusion into user kernels (item 7), tier (a):
the analyses, advice, renderers and JSON round trips on hand-made records over a saved capture
(tests/fixtures/capture_add_raw.json); no compile. End to end: tests/test_cudagraphs_e2e.py; GPU:
tests/gpu/test_gpu_cudagraphs.py.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tritoninspect.analyse import build_report
from tritoninspect.analyse.cudagraphs import analyse_cudagraphs, analyse_epilogues
from tritoninspect.model.cudagraph_records import (
    CudagraphCompile,
    CudagraphRecords,
    CudagraphRuns,
    CudagraphSkip,
    EpilogueCandidate,
    EpilogueRecord,
    InputWriter,
    MutatedInput,
)
from tritoninspect.model.records import Capture
from tritoninspect.model.report import Report
from tritoninspect.render.cudagraphs import cudagraph_html, cudagraph_section, epilogue_section
from tritoninspect.textformats.cudagraphs import found_at, headline, skip_kind, stack_site

FIXTURE = Path(__file__).parent / "fixtures" / "capture_add_raw.json"
KID = "add_raw.add_kernel"
MESSAGE = ('skipping cudagraphs due to mutated inputs (1 instances). Found from : \n   File "/m/model.py", line 25, '
           'in forward\n    add_kernel[grid](x, y, n)\n')


def capture(**changes: object) -> Capture:
    return dataclasses.replace(Capture.from_json(FIXTURE.read_text()), **changes)


def written(static: bool = False) -> MutatedInput:
    writer = InputWriter("kernel", "triton_kernel_wrapper_functional_proxy", kernel_id=KID, param="x_ptr",
                         site="/m/model.py:25")
    return MutatedInput(0, "arg0_1", static, (writer,))


def compiled(basis: str = "measured", *, skips: tuple[CudagraphSkip, ...] = (), static: bool = False,
             wrapped: bool = True) -> CudagraphCompile:
    return CudagraphCompile("0/0", "inference", basis, wrapped, skips, (written(static),))


def records(*compiles: CudagraphCompile, runs: tuple[CudagraphRuns, ...] = (),
            run_skips: tuple[tuple[str | None, str, CudagraphSkip], ...] = ()) -> CudagraphRecords:
    return CudagraphRecords(list(compiles), list(runs), list(run_skips))


RUN_SKIP = ("0/0", "inference", CudagraphSkip("run", "mutated_inputs", MESSAGE))


# --- torch's messages ------------------------------------------------------------------------------

def test_skip_messages_read_as_kinds() -> None:
    assert skip_kind(MESSAGE) == "mutated_inputs"
    assert skip_kind("skipping cudagraphs due to cpu device (arg1_1)") == "device"
    assert skip_kind("skipping cudagraphs due to incompatible op aten._local_scalar_dense.default") == "incompatible_op"
    assert skip_kind("something new") == "other"
    assert headline(MESSAGE) == "skipping cudagraphs due to mutated inputs (1 instances)"
    assert found_at(MESSAGE) == ("/m/model.py", 25)
    assert found_at("no trace") == (None, None)
    assert stack_site('File "/a.py", line 3, in f\n  File "/b.py", line 9, in g') == "/b.py:9"


# --- item 6: CUDA graphs ----------------------------------------------------------------------------

def test_measured_skip_is_tied_to_the_kernel_writing_the_input() -> None:
    cap = capture(cudagraphs=records(compiled(), runs=(CudagraphRuns(None, "inference", 1, 0, 0, 0, 3),),
                                     run_skips=(RUN_SKIP,)))
    (use,) = analyse_cudagraphs(cap)["cudagraphs"]
    assert (use.basis, use.cudagraphed) == ("measured", False)
    # The tree of an older torch knows no compile id: the only inference graph takes the counts.
    assert (use.warmups, use.recordings, use.replays, use.eager) == (0, 0, 0, 3)
    (reason,) = use.reasons
    assert (reason.kernel, reason.param, reason.input, reason.site) == ("add_kernel", "x_ptr", "arg0_1", "/m/model.py:25")
    assert (reason.kind, reason.when, reason.text) == ("mutated_inputs", "run", headline(MESSAGE))


def test_recorded_and_replayed_graph_is_cudagraphed() -> None:
    cap = capture(cudagraphs=records(compiled(static=True), runs=(CudagraphRuns("0/0", "inference", 1, 1, 1, 1, 0),)))
    (use,) = analyse_cudagraphs(cap)["cudagraphs"]
    assert use.cudagraphed and use.reasons == ()
    assert (use.functions, use.warmups, use.recordings, use.replays) == (1, 1, 1, 1)


def test_predicted_leaves_out_compile_only_modes_own_device_reason() -> None:
    device = CudagraphSkip("compile", "device", "skipping cudagraphs due to cpu device (arg0_1)")
    (use,) = analyse_cudagraphs(capture(cudagraphs=records(compiled("predicted", skips=(device,)))))["cudagraphs"]
    assert (use.basis, use.cudagraphed, use.reasons, use.recordings) == ("predicted", True, (), None)


def test_predicted_mutation_names_the_kernel() -> None:
    skip = CudagraphSkip("run", "mutated_inputs", MESSAGE)
    (use,) = analyse_cudagraphs(capture(cudagraphs=records(compiled("predicted", skips=(skip,)))))["cudagraphs"]
    assert not use.cudagraphed and use.reasons[0].kernel == "add_kernel"


def test_a_static_input_written_is_not_blamed() -> None:
    skip = CudagraphSkip("run", "mutated_inputs", MESSAGE)
    (use,) = analyse_cudagraphs(capture(cudagraphs=records(compiled(skips=(skip,), static=True))))["cudagraphs"]
    (reason,) = use.reasons
    assert reason.kernel is None and reason.site == "/m/model.py:25"


def test_without_the_option_there_is_no_field() -> None:
    assert analyse_cudagraphs(capture()) == {}
    assert build_report(capture()).cudagraphs == ()


def test_advice_names_the_kernel_and_the_fix() -> None:
    cap = capture(cudagraphs=records(compiled(), runs=(CudagraphRuns("0/0", "inference", 1, 0, 0, 0, 3),),
                                     run_skips=(RUN_SKIP,)))
    report = build_report(cap)
    (advice,) = [a for a in report.advice if a.rule == "cudagraph_skipped"]
    assert advice.kernel == "add_kernel" and "x_ptr" in advice.finding and "[predicted]" not in advice.finding
    assert "an output pointer apart from the input it writes" in advice.action and "mark_static_address" in advice.action
    assert "empty_like" not in advice.action  # the kernel may load what it writes: never a fresh tensor in its place
    fixed = build_report(capture(cudagraphs=records(compiled(static=True),
                                                    runs=(CudagraphRuns("0/0", "inference", 1, 1, 1, 1, 0),))))
    assert not [a for a in fixed.advice if a.rule == "cudagraph_skipped"]


def test_text_and_html_sections() -> None:
    cap = capture(cudagraphs=records(compiled(), runs=(CudagraphRuns("0/0", "inference", 1, 0, 0, 0, 3),),
                                     run_skips=(RUN_SKIP,)))
    report = build_report(cap)
    text = "\n".join(str(line) for line in cudagraph_section(report, Path.cwd()))
    assert "run without CUDA graphs (measured): 0 recorded, 0 replayed, 0 warm-up, 3 without a graph" in text
    assert "add_kernel writes x_ptr (graph input arg0_1) in place" in text
    assert '<section id="cudagraphs">' in cudagraph_html(report)
    assert cudagraph_section(build_report(capture()), Path.cwd()) == []


# --- item 7: epilogues -------------------------------------------------------------------------------

def epilogue(*, available: bool = True, enabled: bool = True, blockers: tuple[str, ...] = (),
             accepted: bool | None = None, reason: str = "", backend: str | None = None) -> EpilogueRecord:
    candidate = EpilogueCandidate("op2", ("relu",), accepted, reason, backend)
    return EpilogueRecord("0/0", "inference", KID, "op1", available, enabled, blockers, (candidate,))


def fusion_of(record: EpilogueRecord, mode: str = "gpu") -> Report:
    cap = capture(epilogues=[record])
    cap.meta["mode"] = mode
    return build_report(cap)


def test_kernel_filter_keeps_only_that_kernels_epilogues() -> None:
    # `graph --kernel NAME` printed every kernel's epilogue lines (the newcomer's fla + Liger model).
    report = fusion_of(epilogue(accepted=True))
    other = dataclasses.replace(report.epilogues[0], kernel="mul_kernel", compile_id="1/0")
    both = dataclasses.replace(report, epilogues=(*report.epilogues, other))
    text = "\n".join(str(x) for x in epilogue_section(both.narrowed("add_kernel"), Path.cwd()))
    assert "[0/0 inference] add_kernel" in text and "mul_kernel" not in text


def test_fused_epilogue() -> None:
    report = fusion_of(epilogue(accepted=True))
    (fusion,) = report.epilogues
    assert fusion.kernel == "add_kernel" and fusion.neighbours[0].fused is True
    assert not [a for a in report.advice if a.rule == "epilogue_refused"]
    assert "op2 (relu): fused" in "\n".join(str(x) for x in epilogue_section(report, Path.cwd()))


def test_blocked_kernel_is_advised_with_the_reason() -> None:
    report = fusion_of(epilogue(blockers=("it has 2 tl.store calls",)))
    (advice,) = [a for a in report.advice if a.rule == "epilogue_refused"]
    assert "it has 2 tl.store calls" in advice.finding and advice.kernel == "add_kernel"


def test_torch_reason_for_refusing_is_kept() -> None:
    report = fusion_of(epilogue(accepted=False, reason="numel mismatch"))
    assert report.epilogues[0].neighbours[0].reason == "numel mismatch"
    assert [a.rule for a in report.advice if a.rule == "epilogue_refused"] == ["epilogue_refused"]


def test_compile_only_backend_refusal_is_said_but_not_advised() -> None:
    report = fusion_of(epilogue(accepted=False, backend="cpp"), mode="compile-only")
    assert "a GPU run decides" in report.epilogues[0].neighbours[0].reason
    assert not [a for a in report.advice if a.rule == "epilogue_refused"]


@pytest.mark.parametrize(("available", "enabled", "words"), [
    (False, False, "not available on this torch"),
    (True, False, "epilogue_fusion_user_defined_triton_kernel is False"),
])
def test_states_the_default_view_hides(available: bool, enabled: bool, words: str) -> None:
    report = fusion_of(epilogue(available=available, enabled=enabled))
    assert epilogue_section(report, Path.cwd(), all_kernels=False) == []
    assert words in "\n".join(str(x) for x in epilogue_section(report, Path.cwd()))
    assert not [a for a in report.advice if a.rule == "epilogue_refused"]


def test_analysis_without_launches_adds_nothing() -> None:
    assert analyse_epilogues(capture(epilogues=[])) == {}


# --- round trips ---------------------------------------------------------------------------------------

def test_capture_round_trip_keeps_the_records() -> None:
    cap = capture(cudagraphs=records(compiled(), runs=(CudagraphRuns(None, "inference", 1, 0, 0, 0, 3),),
                                     run_skips=(RUN_SKIP,)), epilogues=[epilogue(accepted=False, reason="r")])
    again = Capture.from_json(cap.to_json())
    assert again.cudagraphs == cap.cudagraphs and again.epilogues == cap.epilogues
    assert "cudagraphs" not in json.loads(capture().to_json())


def test_report_round_trip_under_the_schema() -> None:
    cap = capture(cudagraphs=records(compiled(), run_skips=(RUN_SKIP,)), epilogues=[epilogue(accepted=True)])
    report = build_report(cap)
    again = Report.from_json(report.to_json())
    assert again.cudagraphs == report.cudagraphs and again.epilogues == report.epilogues


def test_op_kept_out_of_cuda_graphs_leaves_the_rest_cudagraphed() -> None:
    kept = CudagraphSkip("partition", "unbacked", "aten::_local_scalar_dense runs outside CUDA graphs (...)",
                         kernel_id=KID, site="/m/model.py:21")
    cap = capture(cudagraphs=records(CudagraphCompile("0/0", "inference", "predicted", True, (kept,), partitioned=True)))
    report = build_report(cap)
    (use,) = report.cudagraphs
    (reason,) = use.reasons
    assert use.cudagraphed and (reason.kernel, reason.site, reason.when) == ("add_kernel", "/m/model.py:21", "partition")
    assert not [a for a in report.advice if a.rule == "cudagraph_skipped"]
    text = "\n".join(str(x) for x in cudagraph_section(report, Path.cwd()))
    assert "its value reaches add_kernel [unbacked, the rest is CUDA-graphed]" in text


def test_findings_join_the_registry() -> None:
    from tritoninspect.analyse.hazards import RULE_IDS

    cap = capture(cudagraphs=records(compiled(), runs=(CudagraphRuns("0/0", "inference", 1, 0, 0, 0, 3),),
                                     run_skips=(RUN_SKIP,)), epilogues=[epilogue(blockers=("it has 2 tl.store calls",))])
    findings = {f.rule: f for f in build_report(cap).findings}
    assert {"cudagraph_skipped", "epilogue_refused"} <= set(findings) and set(findings) <= set(RULE_IDS)
    skip = findings["cudagraph_skipped"]
    assert (skip.severity, skip.kernel, skip.compile_ids) == ("warning", "add_kernel", ("0/0",))
    (evidence,) = skip.evidence
    assert (evidence.kind, evidence.param, evidence.file, evidence.line, evidence.stage) == (
        "launch", "x_ptr", "/m/model.py", 25, "runtime")
    assert findings["epilogue_refused"].kernel == "add_kernel"


def test_a_reason_that_is_its_own_culprit_is_said_once() -> None:
    text = "skipping cudagraphs due to disabling cudagraphs due to incompatible op aten._local_scalar_dense.default"
    op = CudagraphSkip("compile", "incompatible_op", text)
    cap = capture(cudagraphs=records(dataclasses.replace(compiled("predicted", skips=(op,)), mutated_inputs=(),
                                                         wrapped=False)))
    (finding,) = [f for f in build_report(cap).findings if f.rule == "cudagraph_skipped"]
    assert finding.summary.count(text) == 1, finding.summary
    assert finding.summary.endswith("[predicted]")
