"""Traces of kernels in nested regions, of clones Inductor keeps, and of graph breaks the source explains
(tier a): what a report read from a TORCH_TRACE says where torch prints a graph differently from a plain one
(sub-graphs, activation checkpointing's tags, inline operators), against the live report of the same model.
"""

from __future__ import annotations

import os
import shutil
import textwrap
from pathlib import Path

from _trace_expect import FIXTURES, TRACES, assert_same_kernels, compiled_kernels, live_report, op_counts
from tritoninspect.model.report import read_report
from tritoninspect.run.traces import trace_reports
from tritoninspect.source.parse import parse_source
from tritoninspect.textformats import fx_readable


#: Traces read only here (`python tools/make_trace_fixtures.py --out tests/fixtures/traces/more cond_kernel
#: hazard_clone_cost tests/assets/checkpoint_raw.py`; `cond_two_kernels_214`: tests/assets/cond_two_kernels.py with
#: torch 2.14.1, see tests/fixtures/README.md): one level down, so that tests/fixtures/traces stays one folder of
#: separate runs as tests/test_traces_cli.py reads it.
MORE = TRACES / "more"


def _trace(path: Path):
    (report,) = trace_reports(parse_source(str(path)))
    return report


def test_a_raw_launch_under_activation_checkpointing_is_a_raw_launch_at_every_stage() -> None:
    """tests/assets/checkpoint_raw.py: AOTAutograd's graph prints the checkpointed nodes' source as `#
    ac_graph_id: 2 - PREFER_RECOMPUTE File: ...`; that launch was read as sourceless, so as a triton_op."""
    trace = _trace(MORE / "checkpoint_raw")
    live = read_report(FIXTURES / "live_checkpoint_raw.json")
    assert compiled_kernels(trace) == compiled_kernels(live)
    assert compiled_kernels(trace)["axpb_kernel"]["entries"] == ["hop"]
    # torch logs the AOT graph before it drops two `alias` nodes the live capture never sees
    stages = ("dynamo", "post_grad", "post_grad_final")
    assert op_counts(trace, stages) == op_counts(live, stages)


def test_kernels_in_torch_cond_branches_and_the_graphs_around_them_are_the_live_ones() -> None:
    """samples/cond_kernel.py: the branches' nodes are their sub-graphs', not the graph's (its op count was
    the whole printed text's: 12 for the live 6)."""
    trace, live = _trace(MORE / "cond_kernel"), live_report("cond_kernel")
    assert live is not None
    assert_same_kernels(trace, live)
    assert op_counts(trace) == op_counts(live)


def test_kernels_in_branches_torch_writes_out_of_graph_order_are_named_by_their_branch() -> None:
    """tests/assets/cond_two_kernels.py traced with torch 2.14.1: its output code defines `false_graph_0` first,
    then the outer true branch's two; paired with the graph's launch nodes in graph order, both kernel_idx were
    named `neg_kernel`, and `axpb_kernel` was missing from the report."""
    trace = _trace(MORE / "cond_two_kernels_214")
    live = read_report(FIXTURES / "live_cond_two_kernels_214.json")
    assert trace.meta.torch.startswith("2.14") and live.meta.torch.startswith("2.14")
    assert compiled_kernels(trace) == compiled_kernels(live)
    assert compiled_kernels(trace)["axpb_kernel"]["entries"] == ["hop"]


def test_a_clone_inductor_keeps_is_a_copy_per_call_as_live() -> None:
    """samples/hazard_clone_cost.py: Inductor keeps the clone of a view of a graph input (`as_strided(clone(
    as_strided(x)))` before the final launch node). A trace never read it: "costs no copies (every clone
    re-inplaced)" for the live 4.0 KB per call."""
    trace, live = _trace(MORE / "hazard_clone_cost"), live_report("hazard_clone_cost")
    assert live is not None

    def kept(report):
        return sorted((o.compile_id, o.node, o.clones.after_reinplace, o.clones.bytes) for k in report.kernels
                      for o in k.occurrences if o.clones is not None)

    assert kept(trace) == kept(live) and any(after for _, _, after, _ in kept(trace))
    (cost,) = [f for f in trace.findings if f.rule == "clone_cost"]
    assert cost.severity == "warning" and "costs 4.0 KB of copies per call in 0/0" in cost.summary


def test_source_comments_after_annotations_and_checkpoint_tags_are_read() -> None:
    code = textwrap.dedent('''\
        class GraphModule(torch.nn.Module):
            def forward(self, x: "f32[8][1]cpu"):
                # ac_graph_id: 2 - PREFER_RECOMPUTE File: m.py:9 in forward, code: k[(1,)](x, x)
                t = torch.ops.higher_order.triton_kernel_wrapper_mutation(kernel_idx = 0, constant_args_idx = 0, grid = [(1, 1, 1)], tma_descriptor_metadata = {}, kwargs = {'x_ptr': x})
                # Annotation: {'stage': 1} File: m.py:10 in forward, code: k[(1,)](x, x)
                u = torch.ops.higher_order.triton_kernel_wrapper_mutation(kernel_idx = 0, constant_args_idx = 1, grid = [(1, 1, 1)], tma_descriptor_metadata = {}, kwargs = {'x_ptr': x})
                return (x,)
    ''')
    first, second = fx_readable.parse_graph(code).hops
    assert [(h.source.file, h.source.line) for h in (first, second)] == [("m.py", 9), ("m.py", 10)]


def test_a_graphs_op_count_is_its_own_nodes_inline_operators_included() -> None:
    """As the live capture counts `Graph.op_count` (`call_function`, `call_method`, `call_module` of the graph
    itself): a sub-graph's nodes are not the graph's, and FX prints operators inline (`s77 // 16`, `-x`)."""
    code = textwrap.dedent('''\
        class <lambda>(torch.nn.Module):
            def forward(self, arg0_1: "Sym(s77)", arg1_1: "f32[s77][1]cpu"):
                sin: "f32[s77][1]cpu" = torch.ops.aten.sin.default(arg1_1)
                add: "Sym(s77 + 15)" = arg0_1 + 15
                floordiv: "Sym(((s77 + 15)//16))" = add // 16
                neg: "Sym(-s77)" = -arg0_1
                pw: "Sym(s77**2)" = arg0_1 ** 2
                true_graph_0 = self.true_graph_0
                cond = torch.ops.higher_order.cond(True, true_graph_0, true_graph_0, (sin,))
                getitem: "f32[s77][1]cpu" = cond[0]
                return (getitem,)

            class true_graph_0(torch.nn.Module):
                def forward(self, arg0_1: "f32[s77][1]cpu"):
                    cos: "f32[s77][1]cpu" = torch.ops.aten.cos.default(arg0_1)
                    mul: "f32[s77][1]cpu" = torch.ops.aten.mul.Tensor(cos, 2)
                    return (mul,)
    ''')
    assert fx_readable.parse_graph(code).op_count == 7


def test_an_item_break_says_what_the_value_feeds_as_a_live_capture_does(tmp_path: Path) -> None:
    """samples/break_item_grid.py: `n = int(count.item())` feeds the grid and `n` of the launch on the next line,
    read from the source the log names (here, and unchanged since the log); not when that source changed."""
    (report,) = [_trace(TRACES / "break_item_grid")]
    (brk,) = report.graph_breaks
    assert brk.value_uses == {"kernel": 35}
    assert "only feeds a kernel's grid or scalar arguments (line 35)" in (brk.hint or "")
    log = next((TRACES / "break_item_grid").glob("*.log"))
    copy = tmp_path / log.name
    shutil.copyfile(log, copy)
    os.utime(copy, (1, 1))  # written long before the source's last change
    (old,) = _trace(copy).graph_breaks
    assert old.value_uses is None and old.context == ()
