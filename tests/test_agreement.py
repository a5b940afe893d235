"""tools/agreement.py and tools/agree.py (tier a): the device-independent view of a report and the comparison of two.

Runs on the stored reports of the GPU machine (tests/fixtures/gpu/: gpu mode;
tests/fixtures/gpu-compile-only/: forced compile-only mode on the same machine;
tests/fixtures/gpu-old-layout/: gpu-mode reports from before Occurrence.scalars,
.part and post_grad_final existed, which agreement must still read), so nothing
compiles here.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from tools.agree import load_report, main
from tools.agreement import (
    COMPILE_ONLY_LIMITATIONS,
    KNOWN_DIFFERENCES,
    MISSING,
    KnownDifference,
    compare,
    device_independent,
)
from tritoninspect.model.report import Kernel, Occurrence, Report, Resources, with_meta

FIXTURES = Path(__file__).parent / "fixtures"
GPU = FIXTURES / "gpu"
COMPILE_ONLY = FIXTURES / "gpu-compile-only"
OLD_LAYOUT = FIXTURES / "gpu-old-layout"
STORED = sorted(p.stem for p in GPU.glob("*.json"))
REALLIB = FIXTURES / "gpu-reallib"
REALLIB_STORED = sorted(p.stem for p in (REALLIB / "gpu").glob("*.json"))
#: Samples where GPU mode and compile-only mode differ, as a documented limitation says.
LIMITED = sorted({lim.target.split(".py:")[0] for lim in COMPILE_ONLY_LIMITATIONS} & set(STORED))


def gpu(name: str) -> Report:
    return load_report(GPU / f"{name}.json")


def compile_only(name: str) -> Report:
    return load_report(COMPILE_ONLY / f"{name}.json")


def old_layout(name: str) -> Report:
    return load_report(OLD_LAYOUT / f"{name}.json")


def without_resources(report: Report) -> Report:
    return dataclasses.replace(report, kernels=tuple(dataclasses.replace(k, resources=()) for k in report.kernels))


def replace_occurrences(report: Report, kernel: str, change) -> Report:
    """A copy of `report` with `change(occurrence)` applied to every occurrence of one kernel."""
    kernels = tuple(
        dataclasses.replace(k, occurrences=tuple(change(o) for o in k.occurrences)) if k.name == kernel else k
        for k in report.kernels
    )
    return dataclasses.replace(report, kernels=kernels)


def test_fixtures_are_both_modes_of_every_stored_sample() -> None:
    assert STORED, "no stored GPU reports"
    assert sorted(p.stem for p in COMPILE_ONLY.glob("*.json")) == STORED
    for name in STORED:
        assert gpu(name).meta.mode == "gpu"
        assert compile_only(name).meta.mode == "compile-only"
        assert gpu(name).meta.torch == compile_only(name).meta.torch  # same machine, same torch


@pytest.mark.parametrize("name", STORED)
def test_gpu_and_compile_only_agree_on_the_gpu_machine(name: str) -> None:
    result = compare(gpu(name), compile_only(name))
    assert result.unexplained == ()
    # Not vacuous: every kernel's occurrences and the graphs were compared.
    facts = device_independent(gpu(name)).keys() | device_independent(compile_only(name)).keys()
    assert result.compared == len(facts) >= 20
    assert any(".occurrences[" in path for path in facts)
    # A limitation that no longer shows is stale: remove it from COMPILE_ONLY_LIMITATIONS.
    assert bool(result.differences) == (name in LIMITED), [d.describe() for d in result.differences]


def test_the_reallib_fixtures_are_both_modes_of_every_model() -> None:
    """Every model's two reports from the GPU machine are stored, but for the models still awaiting
    their GPU run (test_reallib.AWAITING_GPU_REPORTS), which must have none (else: remove the name)."""
    from test_reallib import AWAITING_GPU_REPORTS

    models = sorted(p.stem for p in (Path(__file__).parent / "reallib").glob("[a-z]*.py"))
    assert AWAITING_GPU_REPORTS <= set(models)
    stored = sorted(set(models) - AWAITING_GPU_REPORTS)  # an awaited model's stored reports fail this: remove its name
    assert REALLIB_STORED == stored
    assert sorted(p.stem for p in (REALLIB / "compile-only").glob("*.json")) == stored


@pytest.mark.parametrize("name", REALLIB_STORED)
def test_reallib_gpu_and_compile_only_agree_on_the_gpu_machine(name: str) -> None:
    """The real-library tier on the H200: every difference between the modes is a documented
    limitation of compile-only mode (Liger's RMSNorm grid from the tensor's device, fla's autotuner
    benchmarking), and a limitation that no longer shows is stale."""
    gpu_report = load_report(REALLIB / "gpu" / f"{name}.json")
    result = compare(gpu_report, load_report(REALLIB / "compile-only" / f"{name}.json"))
    assert result.unexplained == (), [d.describe() for d in result.unexplained]
    assert result.compared >= 30 and any(".occurrences[" in d for d in device_independent(gpu_report))
    limited = {lim.target.split(".py:")[0] for lim in COMPILE_ONLY_LIMITATIONS}
    assert bool(result.differences) == (name in limited), [d.describe() for d in result.differences]


def test_device_guard_nodes_are_left_out() -> None:
    """fla's input_guard enters torch.cuda.device(index) for CUDA tensors only: on the GPU the graph
    holds `_cuda_exchangeDevice` nodes (and one compile is nothing else), in compile-only mode not.
    They are left out of the comparison; anything else in those graphs still counts."""
    gpu_report = load_report(REALLIB / "gpu" / "fla_l2norm.json")
    assert any("_cuda_exchangeDevice" in g.code for g in gpu_report.graphs)
    facts = device_independent(gpu_report)
    assert not any("_cuda_" in str(v) for v in facts.values())
    assert "graphs[5/0 dynamo].code" not in facts  # only device guards: left out with its AOT graph
    assert facts["graphs[2/0 dynamo].op_count"] == 1
    changed = dataclasses.replace(gpu_report, graphs=tuple(
        dataclasses.replace(g, code=g.code.replace("l_args_1_.contiguous()", "l_args_1_.clone()")) if g.compile_id == "2/0" else g
        for g in gpu_report.graphs))
    assert [d.path for d in compare(gpu_report, changed).differences] == ["graphs[2/0 dynamo].code"]


def test_a_limitation_with_lines_covers_only_those_lines() -> None:
    """Liger's RMSNorm limitation covers graph lines about the sm_count-sized buffer and grid, no other."""
    gpu_report = load_report(REALLIB / "gpu" / "liger_rms_norm.json")
    cpu_report = load_report(REALLIB / "compile-only" / "liger_rms_norm.json")
    assert compare(gpu_report, cpu_report).unexplained == ()
    graphs = tuple(dataclasses.replace(g, code=g.code.replace("torch.ops.aten.empty.memory_format", "torch.ops.aten.zeros"))
                   if g.stage == "aot_backward" else g for g in cpu_report.graphs)
    (diff,) = compare(gpu_report, dataclasses.replace(cpu_report, graphs=graphs)).unexplained
    assert diff.path == "graphs[0/0 aot_backward backward].code"


def test_every_stored_sample_has_its_kernel_resources_from_both_modes() -> None:
    """--resources ran in both modes; the stored GPU reports hold the compiled kernel's numbers."""
    for name in STORED:
        for report in (gpu(name), compile_only(name)):
            with_resources = [k for k in report.kernels if k.resources]
            assert with_resources, f"{name} ({report.meta.mode}): no kernel resources"
            assert all(r.registers for k in with_resources for r in k.resources if r.registers is not None)
    assert {r.source for k in gpu("autotune").kernels for r in k.resources} == {"gpu"}


def test_the_view_leaves_out_what_depends_on_the_device() -> None:
    report = gpu("dynamic_shapes")  # has `# File:` comments (triton.cdiv) and device(type='cuda', index=0)
    assert any("device(type='cuda', index=0)" in g.code and "# File: " in g.code for g in report.graphs)

    def elsewhere(code: str) -> str:
        return (code.replace("device(type='cuda', index=0)", "device(type='cpu')")
                .replace("site-packages/triton/__init__.py:68", "other/triton/__init__.py:69"))

    graphs = tuple(dataclasses.replace(g, code="other code", op_count=g.op_count + 5) if g.stage == "output_code"
                   else dataclasses.replace(g, code=elsewhere(g.code)) for g in report.graphs)
    other = with_meta(dataclasses.replace(report, graphs=graphs), mode="compile-only", device="cpu", torch="9.9")
    assert compare(report, other).differences == ()


def test_a_changed_graph_differs() -> None:
    report = gpu("add_raw")
    graphs = tuple(dataclasses.replace(g, code=g.code.replace("torch.sin(", "torch.cos(")) if g.stage == "dynamo"
                   else g for g in report.graphs)
    (diff,) = compare(report, dataclasses.replace(report, graphs=graphs)).differences
    assert diff.path == "graphs[0/0 dynamo].code"
    line = next(n for n, text in enumerate(diff.a.splitlines(), 1) if "torch.sin(" in text)
    assert diff.describe().startswith(f"graphs[0/0 dynamo].code (line {line}): ")
    assert "torch.sin(" in diff.describe() and "torch.cos(" in diff.describe()


def test_a_changed_tensors_to_clone_is_one_difference() -> None:
    report = compile_only("add_raw")
    changed = replace_occurrences(
        report, "add_kernel",
        lambda o: dataclasses.replace(o, tensors_to_clone=("x_ptr", "out_ptr")) if o.stage == "post_grad" else o,
    )
    (diff,) = compare(gpu("add_raw"), changed).differences
    assert diff.path.endswith(".tensors_to_clone") and "post_grad" in diff.path
    assert (diff.a, diff.b) == (["out_ptr"], ["x_ptr", "out_ptr"])
    assert diff.explained is None


def test_a_kernel_missing_from_output_code_differs() -> None:
    changed = replace_occurrences(
        compile_only("triton_op"), "add_kernel",
        lambda o: dataclasses.replace(o, in_output_code=False) if o.stage == "aot_inference" else o,
    )
    (diff,) = compare(gpu("triton_op"), changed).differences
    assert diff.path.endswith(".in_output_code") and (diff.a, diff.b) == (True, False)


def test_an_extra_graph_break_differs() -> None:
    report = compile_only("graph_break")
    extra = dataclasses.replace(report.graph_breaks[0], compile_id="9/0")
    changed = dataclasses.replace(report, graph_breaks=(*report.graph_breaks, extra))
    paths = [d.path for d in compare(gpu("graph_break"), changed).differences]
    assert paths and all(p.startswith(f"graph_breaks[{len(report.graph_breaks)}]") for p in paths)
    assert all(d.a == MISSING for d in compare(gpu("graph_break"), changed).differences)


def test_a_mutation_fallback_differs() -> None:
    changed = replace_occurrences(
        compile_only("add_raw"), "add_kernel",
        lambda o: dataclasses.replace(o, mutation_analysis_fallback="CompilationError: x")
        if o.stage == "dynamo" else o,
    )
    (diff,) = compare(gpu("add_raw"), changed).differences
    assert diff.path.endswith(".mutation_analysis_fallback") and (diff.a, diff.b) == (False, True)


def test_constexprs_and_scalars_compare_together() -> None:
    """Reports written before the split (all non-tensor args in `constexprs`, as the
    old-layout GPU reports) agree with reports that keep plain scalars apart."""
    report = old_layout("autotune")
    kernel = report.kernels[0]
    declared = set(kernel.constexpr_params)

    def split(o: Occurrence) -> Occurrence:
        if o.constexprs is None:
            return o
        return dataclasses.replace(
            o, constexprs={k: v for k, v in o.constexprs.items() if k in declared} or None,
            scalars={k: v for k, v in o.constexprs.items() if k not in declared},
        )

    new = replace_occurrences(report, kernel.name, split)
    assert any(o.scalars for o in new.kernels[0].occurrences)
    assert compare(report, new).differences == ()


def test_occurrence_parts_of_reports_before_part_existed() -> None:
    """Old-layout reports predate Occurrence.part: forward/backward are inferred, and
    agree with the same report where every occurrence states its part."""
    report = old_layout("autograd_function")
    aot = {"aot_forward": "forward", "aot_backward": "backward"}
    post_grad = iter(["forward", "backward", "backward"])  # the order the stages compiled in

    def with_part(o: Occurrence) -> Occurrence:
        if o.stage == "output_code":
            return dataclasses.replace(o, part=o.subgraph, subgraph=None)
        if o.stage == "post_grad":
            return dataclasses.replace(o, part=next(post_grad))
        return dataclasses.replace(o, part=aot.get(o.stage))

    new = replace_occurrences(report, "mul_kernel", with_part)
    assert compare(report, new).differences == ()
    labels = [p for p in device_independent(report) if "post_grad backward" in p]
    assert labels, "post-grad backward occurrences were not told apart"


def test_paths_compare_relative_to_the_checkout() -> None:
    report = gpu("graph_break")
    root = report.kernels[0].file.rsplit("/samples/", 1)[0]

    def move(path: str | None) -> str | None:
        return path.replace(root, "/elsewhere/clone") if path else path

    kernels = tuple(dataclasses.replace(k, file=move(k.file)) for k in report.kernels)
    breaks = tuple(dataclasses.replace(b, file=move(b.file), user_stack=tuple(move(f) for f in b.user_stack))
                   for b in report.graph_breaks)
    graphs = tuple(dataclasses.replace(g, code=move(g.code)) for g in report.graphs)
    moved = dataclasses.replace(report, kernels=kernels, graph_breaks=breaks, graphs=graphs)
    assert compare(report, moved).differences == ()
    assert "# File: samples/graph_break.py:" in device_independent(report)["graphs[0/0 dynamo].code"]
    assert device_independent(report)["kernels[add_kernel].source"].startswith("samples/graph_break.py:")


def test_known_differences_apply_only_between_their_versions() -> None:
    known = [KnownDifference("torch", ("2.11", "2.13"), "kernels[*].grid", "grid layout changed in 2.13 (PR)")]
    a = gpu("add_raw")
    changed = replace_occurrences(
        a, "add_kernel", lambda o: dataclasses.replace(o, grid=((8, 1, 1),)) if o.grid else o
    )
    # The glob must match the field's path: occurrences sit between kernels[...] and .grid.
    assert all(d.explained is None for d in compare(a, changed, known).differences)
    known = [dataclasses.replace(known[0], path="kernels[*].occurrences[*].grid")]
    b = with_meta(changed, torch="2.13.0+cpu")
    result = compare(a, b, known)
    assert result.differences and all(d.explained == known[0].reason for d in result.differences)
    assert result.unexplained == ()
    same_version = compare(a, changed, known)
    assert same_version.differences and same_version.unexplained == same_version.differences


def test_a_known_difference_with_a_target_applies_to_that_model_only() -> None:
    known = [KnownDifference("torch", ("2.11", "2.13"), "kernels[*].occurrences[*].grid", "a reason", target="x.py")]
    a = gpu("add_raw")
    b = with_meta(replace_occurrences(a, "add_kernel", lambda o: dataclasses.replace(o, grid=((8, 1, 1),)) if o.grid
                                      else o), torch="2.13.0+cpu")
    assert compare(a, b, known).unexplained  # add_raw's report is not x.py's
    mine = [dataclasses.replace(known[0], target=a.meta.target.split(":")[0].rsplit("/", 1)[-1])]
    assert compare(a, b, mine).differences and not compare(a, b, mine).unexplained


def test_graph_code_keeps_activation_checkpointing_comments_relative() -> None:
    from tools.agreement import _Paths, graph_code

    line = "    # ac_graph_id: 2 - PREFER_RECOMPUTE File: {}/samples/checkpoint_kernel.py:46 in block, code: return s(x)"
    gpu_side = graph_code(line.format("/work/main"), _Paths("/work/main"))
    here = graph_code(line.format("/tmp/clone"), _Paths("/tmp/clone"))
    assert gpu_side == here == line.format("").replace("File: /samples", "File: samples")


def test_every_known_difference_gives_its_reason() -> None:
    for entry in KNOWN_DIFFERENCES:
        assert entry.package in ("torch", "triton") and len(entry.reason) > 40 and entry.path


def _with_resources(report: Report, registers: int, target: str = "sm_90") -> Report:
    res = Resources(config={"BLOCK": 16}, target=target, source="gpu", registers=registers, shared=0, spills=0,
                    num_warps=4, num_stages=3)
    return dataclasses.replace(report, kernels=tuple(dataclasses.replace(k, resources=(res,)) for k in report.kernels))


def test_resources_compare_only_where_both_reports_have_them() -> None:
    a, b = without_resources(gpu("add_raw")), without_resources(compile_only("add_raw"))
    assert compare(_with_resources(a, 30), b).differences == ()  # --resources on one side only
    assert compare(_with_resources(a, 30), _with_resources(b, 30, "sm_80")).differences == ()  # other target
    (diff,) = compare(_with_resources(a, 30), _with_resources(b, 32)).differences
    assert diff.path == "kernels[add_kernel].resources[sm_90 BLOCK=16].registers" and (diff.a, diff.b) == (30, 32)


def test_cli_prints_the_count_and_exits_0_on_agreement(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(GPU), str(COMPILE_ONLY)]) == 0
    out = capsys.readouterr().out.splitlines()
    results = [compare(gpu(n), compile_only(n)) for n in STORED]
    total, differ = sum(r.compared for r in results), sum(len(r.differences) for r in results)
    assert out[-1] == f"{total} fields compared, {differ} differ ({differ} explained: version differences or " \
        "documented compile-only limitations)"
    assert [line.split(":")[0] for line in out[:-1] if not line.startswith(" ")] == STORED


def test_cli_lists_each_difference_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    changed = replace_occurrences(
        compile_only("add_raw"), "add_kernel",
        lambda o: dataclasses.replace(o, launches=2) if o.stage == "runtime" else o,
    )
    (tmp_path / "add_raw.json").write_text(changed.to_json())
    assert main([str(GPU / "add_raw.json"), str(tmp_path / "add_raw.json")]) == 1
    out = capsys.readouterr().out
    assert ".launches: 1 != 2" in out and out.rstrip().endswith("1 differ")


def test_cli_folder_pairs_and_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "add_raw.json").write_text((COMPILE_ONLY / "add_raw.json").read_text())
    assert main([str(GPU), str(tmp_path)]) == 1  # the other samples exist on one side only
    out = capsys.readouterr().out
    assert f"autotune: not compared: only in {GPU}" in out
    assert re.search(r"^add_raw: \d+ fields compared, 0 differ$", out, re.M)
    assert out.rstrip().endswith(f"; {len(STORED) - 1} not compared")
    assert main([str(GPU), str(tmp_path / "nope")]) == 2
    assert "give two report files or two folders" in capsys.readouterr().err
    # A failed run leaves an error object, not a report: said per pair, the rest still compared.
    (tmp_path / "add_raw.json").write_text('{"error": {"type": "UserCodeError"}}')
    (tmp_path / "autotune.json").write_text((COMPILE_ONLY / "autotune.json").read_text())
    assert main([str(GPU), str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "add_raw: not compared:" in out and "schema_version" in out
    assert re.search(r"^autotune: \d+ fields compared, 0 differ$", out, re.M)


def test_kernel_resources_round_trip_through_json() -> None:
    report = _with_resources(gpu("add_raw"), 30)
    again = Report.from_json(report.to_json())
    assert again.kernels[0].resources == report.kernels[0].resources
    assert isinstance(again.kernels[0], Kernel)


def test_a_stage_one_report_predates_is_left_out_and_said() -> None:
    """Old-layout reports predate post_grad_final graphs: not a difference, but a note."""
    a = old_layout("add_raw")
    post_grad = next(g for g in a.graphs if g.stage == "post_grad")
    final = dataclasses.replace(post_grad, stage="post_grad_final")
    node = next(o for o in a.kernels[0].occurrences if o.stage == "post_grad")
    kernel = dataclasses.replace(a.kernels[0], occurrences=(*a.kernels[0].occurrences,
                                                             dataclasses.replace(node, stage="post_grad_final")))
    b = dataclasses.replace(a, graphs=(*a.graphs, final), kernels=(kernel,))
    result = compare(a, b)
    assert result.differences == ()
    assert result.notes == ("stage post_grad_final only in the second report (the other was written before "
                            "tritoninspect recorded it): not compared",)
    # Both have it: compared like any stage.
    assert compare(b, b).notes == () and compare(b, b).compared > result.compared
    changed = dataclasses.replace(b, graphs=(*a.graphs, dataclasses.replace(final, op_count=99)))
    (diff,) = compare(b, changed).differences
    assert diff.path.endswith("post_grad_final inference].op_count")


@pytest.mark.parametrize("sample", LIMITED)
def test_a_limitation_applies_to_its_own_sample_only(sample: str) -> None:
    """The differences a limitation explains for its sample count against any other target."""
    result = compare(gpu(sample), compile_only(sample))
    assert result.differences and all(d.explained for d in result.differences)
    renamed = dataclasses.replace(gpu(sample), meta=dataclasses.replace(gpu(sample).meta, target="samples/other.py:Net"))
    assert any(d.explained is None for d in compare(renamed, compile_only(sample)).differences)


def test_graph_code_drops_installed_packages_inside_the_checkout() -> None:
    """A venv inside the repo (as the README makes) is still library code, not the user's."""
    from tools.agreement import _Paths, graph_code

    code = (
        "    # File: /repo/samples/m.py:20 in forward, code: y = f(x)\n"
        "    # File: /repo/.venv/lib/python3.11/site-packages/triton/__init__.py:69 in cdiv, code: ...\n"
        "    add: \"Sym(s77 + 32)\" = s77 + 32\n"
    )
    kept = graph_code(code, _Paths("/repo"))
    assert kept.splitlines() == [
        "    # File: samples/m.py:20 in forward, code: y = f(x)",
        "    add: \"Sym(s77 + 32)\" = s77 + 32",
    ]


def test_recompile_reasons_compare_without_machine_paths_and_torch_lines() -> None:
    """The guard's source comment cuts the path to a column width that changed between
    torch versions; symbolic guards name the torch line they came from."""
    from tools.agreement import _Paths, guard_text

    gpu_side = ("1/0: ___stack1 == 40                                          # n = int(count.item())  "
                "# ork/main/samples/break_item_grid.py:34 in resume_at_34 (_dynamo/variables/tensor.py:1951 in "
                "evaluate_expr)\n  File \"/work/main/samples/break_item_grid.py\", line 34")
    here = ("1/0: ___stack1 == 40                                     # n = int(count.item())  "
            "# main/samples/break_item_grid.py:34 in resume_at_34 (_dynamo/variables/tensor.py:2606 in "
            "evaluate_expr)\n  File \"/tmp/clone/samples/break_item_grid.py\", line 34")
    a, b = guard_text(gpu_side, _Paths("/work/main")), guard_text(here, _Paths("/tmp/clone"))
    assert a == b == ("1/0: ___stack1 == 40  # n = int(count.item())  # break_item_grid.py:34 in resume_at_34\n"
                      "  File \"samples/break_item_grid.py\", line 34")
    # The guard itself, its line and its function still count.
    assert guard_text(here.replace("== 40", "== 41"), _Paths("/tmp/clone")) != b
    assert guard_text(here.replace(".py:34 in", ".py:35 in"), _Paths("/tmp/clone")) != b
