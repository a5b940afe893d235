"""The graph around each kernel (tier a): FX text read back, pictures from saved reports, the layout.

Expectations come from the samples' sources (samples/*.py) and the graph text in each
saved report, not from the pictures themselves.
"""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from _expect import REPO
from tritoninspect.analyse.pictures import MAX_NODES, code_pictures, fx_pictures, short_op
from tritoninspect.render._layout import GAP_X, layout
from tritoninspect.model.report import read_report
from tritoninspect.textformats.fx_graph import parse_fx

GPU = REPO / "tests" / "fixtures" / "gpu"


def report(name: str):  # type: ignore[no-untyped-def]
    return read_report(GPU / f"{name}.json")


def graph_code(name: str, stage: str, part: str = "") -> str:
    return next(g.code for g in report(name).graphs if g.stage == stage and (not part or g.part == part))


# --- FX text ----------------------------------------------------------------------------


def test_parse_fx_reads_nodes_inputs_and_kernel_bindings() -> None:
    # samples/triton_op.py: torch.cos(add(torch.sin(x), w)) * 2, add launching add_kernel(x, y, out).
    fx = parse_fx(graph_code("triton_op", "post_grad_final"))
    names = [n.name for n in fx.nodes]
    assert names[:2] == ["arg0_1", "arg1_1"] and names[-1] == "output"
    assert [n.op for n in fx.nodes[:2]] == ["placeholder", "placeholder"]
    hop = next(n for n in fx.nodes if "triton_kernel_wrapper" in n.target)
    assert dict(hop.bindings) == {"x_ptr": "sin", "y_ptr": "arg1_1", "out_ptr": "empty"}
    assert hop.inputs == ("sin", "arg1_1", "empty")
    cos = fx.node("cos")
    assert cos is not None and cos.target == "torch.ops.aten.cos.default" and cos.inputs == ("empty",)
    assert cos.type == "f32[64]" and "triton_op.py:35" in cos.source
    assert fx.users(fx.node("sin")) == [hop]  # type: ignore[arg-type]


def test_parse_fx_ignores_deletes_strings_and_unknown_lines() -> None:
    code = ('class GraphModule(torch.nn.Module):\n'
            '    def forward(self, x: "f32[4]", y: "f32[4]"):\n'
            '        # File: m.py:3 in forward, code: return x\n'
            "        a: \"f32[4]\" = torch.ops.aten.add.Tensor(x, 'y');  x = None\n"
            "        b = a['x']\n"
            '        something odd here\n'
            '        return (b,)\n')
    fx = parse_fx(code)
    assert [(n.name, n.target, n.inputs) for n in fx.nodes] == [
        ("x", "", ()), ("y", "", ()), ("a", "torch.ops.aten.add.Tensor", ("x",)), ("b", "getitem", ("a",)),
        ("output", "", ("b",))]
    assert fx.node("a").source == "m.py:3 in forward: return x"  # type: ignore[union-attr]


@pytest.mark.parametrize(("target", "short"), [
    ("torch.ops.aten.sin.default", "aten.sin"), ("torch.ops.mylib.op.default", "mylib::op"), ("getitem", "getitem")])
def test_short_op(target: str, short: str) -> None:
    assert short_op(target) == short


# --- pictures ---------------------------------------------------------------------------


def edges(picture):  # type: ignore[no-untyped-def]
    labels = {n.id: n.label for n in picture.nodes}
    return {(labels[e.src], labels[e.dst], e.label, e.kind) for e in picture.edges}


def test_triton_op_post_grad_picture() -> None:
    r = report("triton_op")
    (picture,) = fx_pictures(r, r.kernels[0])
    kinds = {n.label: n.kind for n in picture.nodes}
    assert kinds["add_kernel"] == "kernel" and kinds["aten.sin"] == "op" and kinds["aten.empty"] == "alloc"
    assert picture.stage == "post_grad_final" and picture.entry == "triton_op"
    found = edges(picture)
    assert ("aten.sin", "add_kernel", "x_ptr", "data") in found
    # The kernel writes `out` in place; cos reads it after the launch: drawn from the kernel.
    assert ("add_kernel", "aten.cos", "out_ptr", "mutates") in found
    assert not any(dst == "aten.cos" and src == "aten.empty" for src, dst, _, _ in found)


def test_custom_op_is_a_black_box_in_both_pictures() -> None:
    r = report("custom_op")
    (graph,) = fx_pictures(r, r.kernels[0])
    (code,) = code_pictures(r, r.kernels[0])
    for picture in (graph, code):
        focus = next(n for n in picture.nodes if n.id == picture.focus)
        assert focus.kind == "opaque" and "tisample_custom_op::add" in focus.label and "add_kernel" in focus.label
    # Output code: Inductor's sin kernel feeds the op, the cos*2 kernel reads its result.
    labels = {n.label: n for n in code.nodes}
    assert labels["triton_poi_fused_add_sin_0"].kind == "inductor" and labels["triton_poi_fused_add_sin_0"].sublabel == "sin"
    flows = edges(code)
    assert ("triton_poi_fused_add_sin_0", focus.label, "buf0", "data") in flows
    assert (focus.label, "triton_poi_fused_cos_mul_1", "buf1", "data") in flows


def test_output_code_picture_of_a_launch() -> None:
    # samples/triton_op.py launches add_kernel on a grid of cdiv(64, 16) = 4 programs, between
    # Inductor's sin kernel (its input) and its cos * 2 kernel (reading its output).
    r = report("triton_op")
    (picture,) = code_pictures(r, r.kernels[0])
    focus = next(n for n in picture.nodes if n.id == picture.focus)
    assert focus.kind == "kernel" and focus.sublabel == "grid (4, 1, 1)"
    kinds = {n.label: n.kind for n in picture.nodes}
    assert kinds["triton_poi_fused_sin_0"] == "inductor" and kinds["arg1_1"] == "input"
    labels = {n.id: n.label for n in picture.nodes}
    assert {(labels[e.src], labels[e.dst]) for e in picture.edges if e.kind == "data"} >= {
        ("triton_poi_fused_sin_0", focus.label), (focus.label, "triton_poi_fused_cos_mul_1"), ("arg1_1", focus.label)}


def test_two_launches_in_one_graph_get_two_named_pictures() -> None:
    # samples/autograd_function.py: backward launches mul_kernel twice (grad of a and of b).
    r = report("autograd_function")
    backward = [p for p in fx_pictures(r, r.kernels[0]) if p.part == "backward"]
    assert len(backward) == 2 and backward[0].focus != backward[1].focus
    assert all(p.which.startswith("node ") and p.which in p.title for p in backward)
    launches = [p for p in code_pictures(r, r.kernels[0]) if p.part == "backward"]
    assert [p.which for p in launches] == ["launch 2 of 3", "launch 3 of 3"]


def test_every_picture_of_every_sample_is_well_formed() -> None:
    for path in sorted(GPU.glob("*.json")):
        r = read_report(path)
        for kernel in r.kernels:
            for picture in fx_pictures(r, kernel) + code_pictures(r, kernel):
                ids = [n.id for n in picture.nodes]
                assert len(ids) == len(set(ids)) <= MAX_NODES + 8, path.name
                assert picture.focus in ids
                assert all(e.src in ids and e.dst in ids for e in picture.edges), path.name
                assert kernel.name in picture.title


def test_eager_and_dynamo_only_reports() -> None:
    r = report("graph_break")
    eager = next(k for k in r.kernels if k.entries == ("eager",))
    assert fx_pictures(r, eager) == [] and code_pictures(r, eager) == []
    # A `breaks` report stops at Dynamo: the kernel is drawn in the Dynamo graph instead.
    dynamo_only = dataclasses.replace(r, graphs=tuple(g for g in r.graphs if g.stage == "dynamo"))
    hop = next(k for k in r.kernels if "hop" in k.entries)
    drawn = fx_pictures(dynamo_only, hop)
    assert [p.compile_id for p in drawn] == ["0/0", "2/0"] and all(p.stage == "dynamo" for p in drawn)
    assert all("Dynamo graph" in p.title for p in drawn)
    focus = [n for p in drawn for n in p.nodes if n.id == p.focus]
    assert all(n.kind == "kernel" and n.label == hop.name for n in focus)


# --- layout ------------------------------------------------------------------------------


def boxes(nodes, placed):  # type: ignore[no-untyped-def]
    return {n: (placed.centres[n][0] - w / 2, placed.centres[n][1] - h / 2, w, h) for n, w, h in nodes}


def test_layout_layers_point_down_and_never_overlap() -> None:
    nodes = [(f"n{i}", 40.0 + 10 * (i % 3), 28.0) for i in range(12)]
    links = [("n0", "n2"), ("n1", "n2"), ("n2", "n3"), ("n2", "n4"), ("n3", "n5"), ("n4", "n5"), ("n0", "n5"),
             ("n6", "n7"), ("n7", "n5"), ("n8", "n9"), ("n10", "n11"), ("n1", "n11")]
    placed = layout(nodes, links)
    for a, b in links:
        assert placed.centres[a][1] < placed.centres[b][1]
    for (a, (ax, ay, aw, ah)), (b, (bx, by, bw, bh)) in itertools.combinations(boxes(nodes, placed).items(), 2):
        if ay == by:
            assert ax + aw + GAP_X - 0.01 <= bx or bx + bw + GAP_X - 0.01 <= ax, (a, b)
    assert all(0 <= x and x + w <= placed.width and y + h <= placed.height for x, y, w, h in boxes(nodes, placed).values())
    for (a, b), route in zip(links, placed.routes):
        assert route[0][1] <= route[-1][1] and len(route) >= 2


def test_layout_is_deterministic_and_survives_cycles_and_junk() -> None:
    nodes = [("a", 30.0, 20.0), ("b", 30.0, 20.0), ("c", 30.0, 20.0)]
    links = [("a", "b"), ("b", "c"), ("c", "a"), ("a", "a"), ("a", "missing")]
    first, second = layout(nodes, links), layout(nodes, links)
    assert first == second
    assert len(first.routes) == len(links) and first.routes[3] == [] and first.routes[4] == []
    assert first.centres["c"][1] > first.centres["a"][1]  # the back edge is drawn reversed


def test_long_edges_bend_around_layers() -> None:
    nodes = [(n, 40.0, 28.0) for n in "abcd"]
    placed = layout(nodes, [("a", "b"), ("b", "c"), ("c", "d"), ("a", "d")])
    assert len(placed.routes[3]) == 4  # a -> d crosses two layers: two bend points
