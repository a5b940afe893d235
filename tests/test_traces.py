"""Reports read from TORCH_TRACE logs (tier a): the traces of the samples in tests/fixtures/traces/
were made by plain `torch.compile` with TORCH_TRACE set (tools/make_trace_fixtures.py); their
reports must say what a live capture of the same sample says about the compiled program.
"""

from __future__ import annotations

import dataclasses

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from _trace_expect import (TRACES, assert_same_kernels, breaks, hop_arguments, live_report, op_counts, opaque_ops,
                           recompile_changes, recompiles)
from tritoninspect.textformats import fx_readable as fx_graph
from tritoninspect.textformats.torch_trace import read_trace
from tritoninspect.run.traces import trace_reports
from tritoninspect.source.parse import parse_source

#: Folders of tests/fixtures/traces/ that are not one sample's trace made here.
NOT_SAMPLES = {"ranks", "provenance", "gpu", "shape_mismatch", "logs", "more"}  # shape_mismatch: tests/test_traces_cli.py; logs: scripts/gpu-traces; more: tests/test_traces_more.py
SAMPLES = sorted(p.name for p in TRACES.iterdir() if p.is_dir() and p.name not in NOT_SAMPLES)
#: Samples whose only kernel launches inside an opaque custom_op: a trace shows the op, not the kernel.
OPAQUE_ONLY = {"custom_op"}


def trace_report(sample: str):
    (report,) = trace_reports(parse_source(str(TRACES / sample)))
    return report


@pytest.mark.parametrize("sample", SAMPLES)
def test_trace_gives_the_live_kernel_entries_breaks_and_recompiles(sample: str) -> None:
    live = live_report(sample)
    if live is None:
        pytest.skip(f"no live capture or stored report of {sample}")
    trace = trace_report(sample)
    assert trace.meta.mode == "trace"
    assert_same_kernels(trace, live)
    assert breaks(trace) == breaks(live)
    assert recompiles(trace) == recompiles(live)
    assert opaque_ops(trace) == opaque_ops(live)
    assert op_counts(trace) == op_counts(live)
    assert hop_arguments(trace) == hop_arguments(live)
    assert recompile_changes(trace) == recompile_changes(live)


GPU_TRACES = TRACES / "gpu"
#: Each GPU trace's folder under tests/fixtures/traces/gpu/: `<sample>`, `provenance/<sample>`.
GPU_SAMPLES = sorted(str(p.relative_to(GPU_TRACES)) for p in [*GPU_TRACES.glob("*"), *GPU_TRACES.glob("provenance/*")]
                     if p.is_dir() and p.name not in NOT_SAMPLES) if GPU_TRACES.is_dir() else []


@pytest.mark.skipif(not GPU_SAMPLES, reason="no GPU trace fixtures (tests/fixtures/traces/gpu/, made by scripts/gpu-traces)")
@pytest.mark.parametrize("sample", GPU_SAMPLES or ["none"])
def test_gpu_trace_gives_the_gpu_reports_kernel_entries_breaks_and_recompiles(sample: str) -> None:
    """A trace made on the GPU machine (torch 2.11, gpu mode) against the gpu-mode report of the
    same sample from that machine (tests/fixtures/gpu/)."""
    from tritoninspect.model.report import read_report

    stored = TRACES.parent / "gpu" / f"{Path(sample).name}.json"
    if not stored.exists():
        pytest.skip(f"no stored gpu report of {Path(sample).name}")
    live = read_report(stored)
    (trace,) = trace_reports(parse_source(str(GPU_TRACES / sample)))
    assert trace.meta.device == "cuda" and trace.meta.torch == live.meta.torch
    assert_same_kernels(trace, live)
    assert breaks(trace) == breaks(live)
    assert recompiles(trace) == recompiles(live)
    assert opaque_ops(trace) == opaque_ops(live)
    assert neighbours(trace) == neighbours(live)
    assert hop_arguments(trace) == hop_arguments(live)
    assert recompile_changes(trace) == recompile_changes(live)


def neighbours(report) -> list[tuple[object, ...]]:
    """The Inductor kernels around each user-kernel launch, with their fused ops."""
    return sorted(((o.compile_id, n.call, *((x.name, x.ops) if x else (None, None) for x in (n.before, n.after)))
                   for k in report.kernels for o in k.occurrences if o.stage == "output_code"
                   for n in o.neighbourhood or ()), key=repr)


@pytest.mark.skipif(not (GPU_TRACES / "ranks").is_dir(), reason="no GPU trace fixtures")
def test_gpu_two_rank_trace_is_read_and_summarised() -> None:
    """tools/make_rank_trace.py on the GPU machine: rank 1 recompiles (40 then 100 elements)."""
    from tritoninspect.analyse.ranks import summarise_ranks

    reports = trace_reports(parse_source(str(GPU_TRACES / "ranks")))
    assert [r.meta.rank for r in reports] == [0, 1]
    assert {r.meta.device for r in reports} == {"cuda"}
    assert [recompiles(r) != [] for r in reports] == [False, True]
    differ = {d.what for d in summarise_ranks("ranks", reports).differences}
    assert {"recompiles", "compile ids"} <= differ
    assert not {"torch", "device"} & differ  # one job: one torch, one kind of device
    mixed = [reports[0], dataclasses.replace(reports[1], meta=dataclasses.replace(reports[1].meta, torch="2.13.0+cpu",
                                                                                device="cpu"))]
    assert {"torch", "device"} <= {d.what for d in summarise_ranks("mixed", mixed).differences}
    # The first compile's n and BLOCK are not in its graph's launch node (a raw launch's node holds its tensors):
    # they are read from its output code's launch, as a live capture says them.
    assert recompile_changes(reports[1]) == [("0/1", [("one_block_kernel", "constexpr", "BLOCK", "64", "128"),
                                                      ("one_block_kernel", "scalar", "n", "40", "s77")])]


def test_kernel_inside_an_opaque_custom_op_is_unknown_not_guessed() -> None:
    trace = trace_report("custom_op")
    live = live_report("custom_op")
    assert [k.name for k in live.kernels] == ["add_kernel"]
    assert trace.kernels == ()
    assert {o.op for o in trace.opaque_ops} == {"tisample_custom_op::add"}
    assert all(o.kernels == () for o in trace.opaque_ops)
    assert any("opaque custom_op" in u for u in trace.meta.unknown)
    assert any(d.severity == "note" and "opaque custom_op" in d.message for d in trace.diagnostics)


def test_the_default_screen_of_a_trace_shows_the_opaque_ops() -> None:
    """A trace of a model whose kernels sit in a library's custom_ops has no kernel row: the default
    screen said only "Kernels (0)" and showed the ops with --detail alone."""
    from tritoninspect.render.overview import render_overview

    text = render_overview(trace_report("custom_op"), color=False, width=100)
    before_notes = text.split("--detail", 1)[0]
    assert "Opaque ops (1)" in before_notes and "tisample_custom_op::add [0/0]" in before_notes
    assert "kernels inside: unknown (a trace does not show them" in " ".join(before_notes.split())
    assert "Opaque ops" not in render_overview(live_report("custom_op"), color=False, width=100)  # its kernel row says it


def test_triton_op_nested_or_from_a_registered_backward_has_its_op_unknown() -> None:
    trace = trace_report("triton_op_autograd")
    ops = {k.name: {o.custom_op for o in k.occurrences} for k in trace.kernels}
    assert ops == {"mul_kernel": {None}, "scale_kernel": {None}, "mul_grads_kernel": {None}}
    assert {k.name: k.entries for k in trace.kernels} == {n: ("triton_op",) for n in ops}
    notes = [d.message for d in trace.diagnostics if d.severity == "note"]
    assert any("mul_grads_kernel" in n and "registered backward" in n for n in notes)


def test_eager_launches_are_unknown_in_a_trace_not_zero() -> None:
    """A trace holds compiles, not launches: the default view says `?` where a live one counts."""
    from typer.testing import CliRunner

    from tritoninspect.analyse.summary import summarise
    from tritoninspect.cli import app

    assert [k.eager_launches for k in summarise(trace_report("graph_break"))] == [None]
    assert all(isinstance(k.eager_launches, int) for k in summarise(live_report("graph_break")))
    text = CliRunner().invoke(app, ["graph", str(TRACES / "graph_break")]).stdout
    header = next(line for line in text.splitlines() if line.startswith("kernel "))
    row = next(line for line in text.splitlines() if line.startswith("add_kernel "))
    assert row[header.index("eager"):].split()[0] == "?"


def test_trace_report_says_where_the_trace_came_from() -> None:
    report = trace_report("add_raw")
    assert report.meta.torch.startswith("2.")
    assert report.meta.device == "cpu"
    assert report.meta.triton
    assert all(o.launches is None for k in report.kernels for o in k.occurrences)


def test_reading_a_trace_imports_no_torch() -> None:
    code = textwrap.dedent(f"""
        import sys
        from tritoninspect.run.traces import trace_reports
        from tritoninspect.source.parse import parse_source
        trace_reports(parse_source({str(TRACES / 'triton_op')!r}))
        from typer.testing import CliRunner
        from tritoninspect.cli import app
        for args in (["graph", {str(TRACES / 'ranks')!r}], ["breaks", {str(TRACES / 'graph_break')!r}]):
            assert CliRunner().invoke(app, args).exit_code == 0
        assert "torch" not in sys.modules and "triton" not in sys.modules, sorted(sys.modules)
    """)
    subprocess.run([sys.executable, "-c", code], check=True)


def test_trace_events_payloads_and_interned_stacks(tmp_path: Path) -> None:
    log = tmp_path / "dedicated_log_torch_trace_rank_1_abc.log"
    log.write_text(
        'V1130 08:00:00.000001 7 torch/_logging/structured.py:28] {"str": ["model.py", 0]}\n'
        'V1130 08:00:00.000002 7 torch/_dynamo/convert_frame.py:1] {"dynamo_start": {"stack": '
        '[{"line": 3, "name": "f", "filename": 0}]}, "rank": 1, "frame_id": 2, "frame_compile_id": 1, "attempt": 1}\n'
        'V1130 08:00:00.000003 7 torch/_dynamo/output_graph.py:1] {"dynamo_output_graph": {}, "rank": 1, '
        '"frame_id": 2, "frame_compile_id": 1, "attempt": 0, "has_payload": "x"}\n'
        "\tclass GraphModule(torch.nn.Module):\n\t    def forward(self):\n"
    )
    trace = read_trace(log)
    assert trace.rank == 1
    start, graph = trace.events
    assert start.meta["stack"][0]["filename"] == "model.py"
    assert (start.compile_id, graph.compile_id) == ("2/1", "2/1")
    assert graph.payload.splitlines() == ["class GraphModule(torch.nn.Module):", "    def forward(self):"]


def test_hop_nodes_parse_from_printed_graphs() -> None:
    code = textwrap.dedent('''\
        class GraphModule(torch.nn.Module):
            def forward(self, L_x_: "f32[64][1]cuda:0", s77: "Sym(s77)"):
                l_x_ = L_x_
                # File: m.py:9 in forward, code: wrap_triton(add_kernel)[(triton.cdiv(n, 16),)](x, x, n)
                floordiv: "Sym(((s77 + 15)//16))" = s77 // 16
                t = torch.ops.higher_order.triton_kernel_wrapper_functional(kernel_idx = 3, constant_args_idx = 4, grid = [(floordiv, 1, 1)], tma_descriptor_metadata = {}, kwargs = {'x_ptr': l_x_, 'n': s77, 'note': 'a), b'}, tensors_to_clone = ['x_ptr']);  l_x_ = None
                y = torch.ops.mylib.opaque.default(l_x_)
                return (y,)
    ''')
    graph = fx_graph.parse_graph(code, frozenset({"aten"}))
    (hop,) = graph.hops
    assert (hop.kernel_idx, hop.form, hop.tensors_to_clone) == (3, "functional", ("x_ptr",))
    assert hop.kwargs["note"] == "a), b" and hop.grid == ((fx_graph.Ref("floordiv"), 1, 1),)
    assert fx_graph.launched_name(hop.source.code) == "add_kernel"
    assert fx_graph.tensor_info(graph.types["l_x_"]) == ("float32[64]", 256)
    assert fx_graph.sym_expr(graph.types["floordiv"]) == "((s77 + 15)//16)"
    assert [(o.name, o.op) for o in graph.ops] == [("y", "mylib::opaque")]


@pytest.mark.parametrize("sample", ["add_raw", "triton_op", "inplace"])
def test_fusion_neighbourhood_from_a_trace_is_the_live_one(sample: str) -> None:
    """The launches around each user kernel and the epilogue-fusion verdict come from the
    output code (and Inductor's config in the compile metrics), which a trace holds."""
    def around(report):
        return sorted((o.compile_id, n.call, n.before.name if n.before else None, n.after.name if n.after else None,
                       n.epilogue_fusion) for k in report.kernels for o in k.occurrences
                      if o.stage == "output_code" for n in o.neighbourhood or ())

    trace, live = trace_report(sample), live_report(sample)
    assert around(trace) and around(trace) == around(live)


def test_ops_around_a_triton_op_from_provenance_are_the_live_ones() -> None:
    """tests/fixtures/traces/provenance/triton_op_softmax (a model like a newcomer's: relu + 1 ->
    triton_op -> softmax) against the live report of the same model: `relu add / _softmax`,
    neither the user kernel's own HOP among the ops fused before it, nor softmax's decomposition."""
    from tritoninspect.analyse.summary import summarise
    from tritoninspect.model.report import read_report

    def around(report):
        hoods = [n for k in report.kernels for o in k.occurrences if o.stage == "output_code"
                 for n in o.neighbourhood or ()]
        return [(n.before.name, n.before.ops, n.after.name, n.after.ops) for n in hoods]

    (trace,) = trace_reports(parse_source(str(TRACES / "provenance" / "triton_op_softmax")))
    live = read_report(TRACES.parent / "live_triton_op_softmax.json")
    assert around(trace) and around(trace) == around(live)
    assert [(k.before, k.after) for k in summarise(trace)] == [(k.before, k.after) for k in summarise(live)]


def test_provenance_names_the_kernels_where_torch_traced_it() -> None:
    """tests/fixtures/traces/provenance/triton_op_autograd: INDUCTOR_PROVENANCE=1. torch 2.13 traces
    the mappings of the forward compile; the lazily compiled backward's come out empty, so its
    kernel is named by launch order, as without provenance."""
    (traced,) = trace_reports(parse_source(str(TRACES / "provenance" / "triton_op_autograd")))
    plain = trace_report("triton_op_autograd")
    assert_same_kernels(traced, plain)
    how = {d.message.split(" → ")[1].split(",")[0]: d.message.rsplit("(from ", 1)[1] for d in traced.diagnostics
           if d.source == "kernel_idx"}
    assert how == {"mul_kernel": "Inductor's provenance)", "scale_kernel": "Inductor's provenance)",
                   "mul_grads_kernel": "launch order in the output code)"}
    # The Inductor kernels around the user kernels got their ops from provenance too.
    calls = [c for g in traced.graphs if g.stage == "output_code" and g.part == "forward" for c in g.code_calls]
    assert {(c.name, c.ops, c.ops_source) for c in calls if c.kind == "inductor"} >= {("cpp_fused_sin_0", ("sin",), "inductor")}


def test_provenance_mapping_keeps_one_entry_per_call_in_handle_order() -> None:
    from tritoninspect.analyse.trace_provenance import kernel_ops, kernel_posts

    payload = ('{"cppCodeToPost": {"k_0:7": ["b"], "k_0:3": ["a", "x"], "add_kernel_0:5": ["hop"]},'
               ' "postToCppCode": {}, "version": 2.0}')
    posts = kernel_posts(payload)
    assert posts == {"k_0": [["a", "x"], ["b"]], "add_kernel_0": [["hop"]]}
    graph = fx_graph.ParsedGraph(targets={"a": "sin", "x": "cos", "b": "mul"})
    assert kernel_ops(posts, graph)["k_0"] == [("sin", "cos"), ("mul",)]
    assert kernel_posts("not json") == {} and kernel_posts('{"version": 2.0}') == {}


def test_provenance_ops_leave_out_other_launches_nodes_and_follow_graph_order() -> None:
    """Inductor lists a user kernel's HOP node (and a custom op an extern call runs) among the
    post-grad nodes of the Inductor kernel before it; a live capture leaves them out."""
    from tritoninspect.analyse.trace_provenance import kernel_ops, kernel_posts

    code = textwrap.dedent('''\
        class <lambda>(torch.nn.Module):
            def forward(self, arg0_1: "f32[8][1]cpu"):
                relu: "f32[8][1]cpu" = torch.ops.aten.relu.default(arg0_1)
                add: "f32[8][1]cpu" = torch.ops.aten.add.Tensor(relu, 1.0)
                opaque: "f32[8][1]cpu" = torch.ops.mylib.opaque.default(add)
                triton_kernel_wrapper_mutation = torch.ops.higher_order.triton_kernel_wrapper_mutation(kernel_idx = 0, constant_args_idx = 1, grid = [(8, 1, 1)], tma_descriptor_metadata = {}, kwargs = {'x_ptr': add})
                return (add,)
        ''')
    graph = fx_graph.parse_graph(code, frozenset({"aten", "prims", "higher_order"}))
    posts = kernel_posts('{"cppCodeToPost": {"cpp_fused_add_relu_0:1": '
                         '["triton_kernel_wrapper_mutation", "opaque", "add", "relu"]}}')
    assert kernel_ops(posts, graph) == {"cpp_fused_add_relu_0": [("relu", "add")]}


def test_original_aten_op_only_where_the_kernel_name_proves_it() -> None:
    """Inductor names a fused kernel after the sorted original ATen ops of its nodes: a group of
    decomposed nodes gets the one op that makes the name, else the post-grad ops stay."""
    from tritoninspect.analyse.trace_provenance import original_ops

    softmax = ("softmax", ["amax", "sub", "exp", "sum", "div"])
    assert original_ops("cpp_fused__softmax_1", [softmax]) == ["_softmax"]
    assert original_ops("triton_per_fused__softmax_add_0", [("h", ["add"]), softmax]) == ["add", "_softmax"]
    assert original_ops("cpp_fused_add_relu_0", [("relu", ["relu"]), ("h", ["add"])]) == ["relu", "add"]
    # Two decomposed groups, a name of other settings, or a name that does not add up: unproven.
    assert original_ops("cpp_fused__softmax_gelu_0", [softmax, ("g", ["mul", "erf"])]) is None
    assert original_ops("cpp_kernel_0", [softmax]) is None
    assert original_ops("cpp_fused_add_mul_softmax_cop_0", [("a", ["add"]), ("m", ["mul"])]) is None


def test_a_gzipped_log_reads_the_same(tmp_path: Path) -> None:
    import gzip

    (log,) = (TRACES / "add_raw").glob("*.log")
    packed = tmp_path / (log.name + ".gz")
    packed.write_bytes(gzip.compress(log.read_bytes()))
    (plain,) = trace_reports(parse_source(str(log)))
    (unpacked,) = trace_reports(parse_source(str(packed)))
    assert unpacked.kernels == plain.kernels and unpacked.graphs == plain.graphs


def test_compile_ids_as_torch_prints_them() -> None:
    from tritoninspect.textformats.torch_trace import compile_id

    assert compile_id({"frame_id": 1, "frame_compile_id": 2, "attempt": 1}) == "1/2"
    assert compile_id({"compiled_autograd_id": 0, "frame_id": 1, "frame_compile_id": 2}) == "!0/1/2"
    assert compile_id({"compiled_autograd_id": 3}) == "!3"
    assert compile_id({}) is None


def test_a_saved_document_of_several_ranks_read_back_says_what_it_is(tmp_path: Path) -> None:
    """Found by a hostile user: `graph DIR -o out.json`, then `graph out.json`, said "tool: unknown field"."""
    from tritoninspect.analyse.ranks import summarise_ranks
    from tritoninspect.model.errors import ReportError
    from tritoninspect.model.report import Report, read_report

    logs = parse_source(str(TRACES / "ranks"))
    saved = tmp_path / "ranks.json"
    saved.write_text(summarise_ranks(logs.text, trace_reports(logs)).to_json())
    for read in (lambda: read_report(saved), lambda: Report.from_json(saved.read_text(), str(saved))):
        with pytest.raises(ReportError, match=r"holds the reports of 2 ranks \(graph DIR --json\), not one report"):
            read()


def test_a_trace_says_it_cannot_tell_whose_library_a_kernel_is() -> None:
    """Found by a hostile user: a trace of a Liger model read with `libraries: []` and nothing saying why."""
    (report,) = trace_reports(parse_source(str(TRACES / "triton_op")))
    assert report.libraries == ()
    assert any("installed library" in u for u in report.meta.unknown)
    assert any("installed library" in d.message for d in report.diagnostics if d.severity == "note")
