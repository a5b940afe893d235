"""Kernels in sub-graphs (issue 22, item 2), tier a and b: the output code's sub-graph functions
parsed like `call()`, and what the report says about launches in them, from saved captures.

`capture_cond_kernel.json` and `capture_checkpoint_kernel.json` are real compile-only captures of
samples/cond_kernel.py and samples/checkpoint_kernel.py (tests/fixtures/README.md says how they
are made). The end-to-end runs of every sub-graph sample, on CPU and on a GPU, are in
tests/test_samples.py and tests/gpu/test_gpu_samples.py (`check_subgraphs` in tests/_expect.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tritoninspect.analyse import build_report
from tritoninspect.analyse.pictures import code_pictures, fx_pictures
from tritoninspect.model.records import Capture
from tritoninspect.render import render
from tritoninspect.model.report import Kernel, Report
from tritoninspect.textformats.output_code import parse_code_calls, subgraph_call_sites, subgraph_kind

FIXTURES = Path(__file__).resolve().parent / "fixtures"

#: A trimmed torch.cond module as Inductor 2.13 writes it: a branch function, then call().
COND_CODE = '''
cpp_fused_sum_0 = async_compile.cpp_pybinding(['const float*', 'float*'], r\'\'\'
extern "C"  void  kernel(const float* in_ptr0, float* out_ptr0)
\'\'\')
# Original path: /m/model.py:3
k_0 = async_compile.triton('k', \'\'\'
@triton_heuristics.user_autotune(
    triton_meta={'signature': {'x_ptr': '*fp32', 'out_ptr': '*fp32', 'n': 'i32', 'BLOCK': 'constexpr'}},
)
\'\'\', device_str='cpu')

def true_graph_0(args):
    true_graph_0_arg0_1, = args
    args.clear()
    true_graph_0_buf0 = empty_strided_cpu((40, ), (1, ), torch.float32)
    k_0.run(true_graph_0_arg0_1, true_graph_0_buf0, 40, 3, 1, 1, stream=raw_streamNone)
    return (true_graph_0_buf0, )

class Runner:
    def call(self, args):
        arg0_1, = args
        args.clear()
        buf0 = empty_strided_cpu((), (), torch.float32)
        cpp_fused_sum_0(arg0_1, buf0)
        if buf0.item():

            # subgraph: true_graph_0
            true_graph_0_args = [arg0_1,]
            buf3 = true_graph_0(true_graph_0_args)
        return (buf3, )
'''


def _report(name: str) -> Report:
    return build_report(Capture.from_json((FIXTURES / f"capture_{name}.json").read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def cond() -> Report:
    return _report("cond_kernel")


@pytest.fixture(scope="module")
def checkpoint() -> Report:
    return _report("checkpoint_kernel")


def _kernel(report: Report) -> Kernel:
    (kernel,) = report.kernels
    return kernel


# --- the output code's functions ------------------------------------------------------------------


def test_sub_graph_functions_are_parsed_after_call() -> None:
    calls = parse_code_calls(COND_CODE)
    assert [(c.function, c.kind, c.name) for c in calls] == [
        ("call", "inductor", "cpp_fused_sum_0"), ("true_graph_0", "user", "k_0")]
    (launch,) = [c for c in calls if c.kind == "user"]
    assert [(a.param, a.buffer) for a in launch.args] == [("x_ptr", "true_graph_0_arg0_1"),
                                                          ("out_ptr", "true_graph_0_buf0")]
    line = COND_CODE.splitlines().index("            # subgraph: true_graph_0") + 1
    assert subgraph_call_sites(COND_CODE) == (("true_graph_0", "call", line),)


@pytest.mark.parametrize(("name", "kind"), [
    ("true_graph_0", "torch.cond branch"), ("false_graph_3", "torch.cond branch"),
    ("while_loop_body_graph_0", "while_loop body"), ("repeated_subgraph1", "invoke_subgraph body"),
    ("call", ""), ("get_args", ""),
])
def test_sub_graph_kinds_by_name(name: str, kind: str) -> None:
    assert subgraph_kind(name) == kind


# --- the report -----------------------------------------------------------------------------------


def test_each_branch_launch_has_its_function_and_what_runs_around_the_cond(cond: Report) -> None:
    hoods = [n for o in _kernel(cond).occurrences for n in o.neighbourhood or ()]
    assert sorted(n.function for n in hoods) == ["false_graph_0", "true_graph_0"]
    graph = next(g for g in cond.graphs if g.stage == "output_code")
    for n in hoods:
        assert graph.code_calls[n.index].function == n.function
        assert n.before is None and n.after is None  # the branch function launches nothing else
        assert n.caller_before is not None and "sum" in n.caller_before.ops
        assert n.caller_after is not None and "cos" in n.caller_after.ops
        assert (n.function_kind, n.call_sites) == ("torch.cond branch", 1)


def test_post_grad_nodes_keep_their_sub_graph(cond: Report) -> None:
    post_grad = [o for o in _kernel(cond).occurrences if o.stage == "post_grad"]
    assert sorted(o.subgraph for o in post_grad) == ["false_graph_0", "true_graph_0"]


def test_run_time_launch_names_the_branch_that_ran(cond: Report) -> None:
    (launch,) = [o for o in _kernel(cond).occurrences if o.stage == "runtime"]
    assert (launch.launches, launch.function, launch.placement) == (1, "true_graph_0", "inference")


def test_recomputed_launch_is_told_apart_from_the_gradient_one(checkpoint: Report) -> None:
    kernel = _kernel(checkpoint)
    backward = [o for o in kernel.occurrences if o.stage == "aot_backward"]
    assert sorted(o.placement for o in backward) == ["backward", "recompute"]
    runtime = {o.placement: o.launches for o in kernel.occurrences if o.stage == "runtime"}
    assert runtime == {"forward": 1, "backward": 1, "recompute": 1}
    hoods = [n for o in kernel.occurrences if o.part == "backward" for n in o.neighbourhood or ()]
    assert sorted(n.recompute for n in hoods) == [False, True]


def test_pictures_stay_in_the_launch_function(cond: Report) -> None:
    graph = next(g for g in cond.graphs if g.stage == "output_code")
    pictures = code_pictures(cond, _kernel(cond))
    assert len(pictures) == 2
    for picture in pictures:
        focus = int(picture.focus[1:])
        function = graph.code_calls[focus].function
        shown = [int(n.id[1:]) for n in picture.nodes if n.id.startswith("c")]
        assert {graph.code_calls[i].function for i in shown} == {function}
        assert f"in {function}" in picture.title


def test_each_branch_node_has_its_own_post_grad_picture(cond: Report) -> None:
    pictures = fx_pictures(cond, _kernel(cond))
    assert sorted(p.which for p in pictures) == ["node false_graph_0.triton_kernel_wrapper_mutation",
                                                 "node true_graph_0.triton_kernel_wrapper_mutation"]


def test_text_says_where_the_launches_are(cond: Report, checkpoint: Report) -> None:
    fusion = render(cond, "text", show="fusion", color=False, width=120)
    assert "in true_graph_0 (a torch.cond branch, called from 1 place)" in fusion
    assert "called after   cpp_fused" in fusion
    detail = render(checkpoint, "detail", color=False, width=120)
    assert "recomputed in the backward" in detail


def test_html_kernel_section_says_it(checkpoint: Report, cond: Report) -> None:
    assert "recomputed in the backward" in render(checkpoint, "html")
    assert "in true_graph_0, a torch.cond branch" in render(cond, "html")
