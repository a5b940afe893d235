"""What each sample should report, and helpers to check a report against it.

Shared by the compile-only end-to-end tests (tests/test_samples.py) and the GPU runs of
the same samples (tests/gpu/). Expectations come from each sample's docstring (and
samples/README.md); line numbers, parameter names, decorators and autotune configs are
read from the sample's source, never copied from a report.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import signal
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _zygote import cli_env, run as zygote_run

from tritoninspect.model.report import SCHEMA_VERSION

REPO = Path(__file__).resolve().parents[1]
SAMPLES_DIR = REPO / "samples"
#: Samples with several models for `tritoninspect diff` (no `Net`): tested in tests/test_diff_cli.py.
DIFF_SAMPLES = ("trio",)
#: Samples about graph breaks and recompiles (`tritoninspect breaks`): tested in tests/test_breaks*.py.
BREAK_SAMPLES = tuple(sorted(p.stem for p in SAMPLES_DIR.glob("*.py") if p.stem.startswith(("break_", "recompile_"))))
#: Samples for `tritoninspect export` (a dynamic shapes hook, two models): tested in tests/test_export_e2e.py.
EXPORT_SAMPLES = ("export_dynamic",)
SAMPLES = sorted(p.stem for p in SAMPLES_DIR.glob("*.py")
                 if p.stem not in DIFF_SAMPLES and p.stem not in BREAK_SAMPLES and p.stem not in EXPORT_SAMPLES)

GRAPH_STAGES = ("dynamo", "aot_forward", "aot_backward", "aot_inference", "post_grad", "post_grad_final")
AOT_STAGES = ("aot_forward", "aot_backward", "aot_inference", "post_grad")
#: Entries under which Inductor sees the launch as a graph node (so output code has it).
VISIBLE = ("hop", "triton_op")


@dataclass(frozen=True)
class Expect:
    """One sample's docstring, as data."""

    #: kernel name -> entry kinds, in the report's order (hop, triton_op, custom_op, eager).
    kernels: dict[str, tuple[str, ...]]
    #: kernel name -> the custom op / triton_op it runs in.
    ops: dict[str, str] = field(default_factory=dict)
    #: The statement (as it starts in the source) each graph break happens at, in order.
    breaks: tuple[str, ...] = ()
    #: Compiled frames (distinct compile ids of Dynamo graphs).
    compiles: int = 1
    recompiles: int = 0
    #: The backward is compiled too (inputs require grad).
    backward: bool = False
    #: Opaque custom op -> kernels launched inside it.
    opaque: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Mutation analysis fails for these kernels: every pointer argument is cloned.
    fallback: tuple[str, ...] = ()
    #: Diagnostic sources expected in compile-only mode (the interpreter cannot run inline asm).
    compile_only_diagnostics: tuple[str, ...] = ()
    #: kernel name -> the autotune configs Dynamo keeps when it prunes them (`prune_configs_by`) at trace time.
    pruned_configs: dict[str, int] = field(default_factory=dict)


EXPECTED: dict[str, Expect] = {
    "add_raw": Expect(kernels={"add_kernel": ("hop",)}),
    "cudagraphs": Expect(kernels={"scale_inplace_kernel": ("hop",)}),
    "epilogues": Expect(kernels={"add_kernel": ("hop",)}),
    "autotune": Expect(kernels={"scaled_add_kernel": ("hop",)}),
    "heuristics": Expect(kernels={"masked_mul_kernel": ("hop",)}),
    "triton_op": Expect(kernels={"add_kernel": ("triton_op",)}, ops={"add_kernel": "tisample_triton_op::add"}),
    "custom_op": Expect(
        kernels={"add_kernel": ("custom_op",)},
        ops={"add_kernel": "tisample_custom_op::add"},
        opaque={"tisample_custom_op::add": ("add_kernel",)},
    ),
    "autograd_function": Expect(kernels={"mul_kernel": ("hop",)}, backward=True),
    "triton_op_autograd": Expect(
        kernels={"mul_kernel": ("triton_op",), "scale_kernel": ("triton_op",), "mul_grads_kernel": ("triton_op",)},
        ops={
            "mul_kernel": "tisample_triton_op_autograd::mul",
            "scale_kernel": "tisample_triton_op_autograd::scale",
            "mul_grads_kernel": "tisample_triton_op_autograd::mul_grads",
        },
        backward=True,
    ),
    "graph_break": Expect(
        kernels={"add_kernel": ("hop",), "scale_kernel": ("eager",)},
        breaks=("h = scale(h, 0.5)", "torch._dynamo.graph_break()"),
        compiles=3,
    ),
    "dynamic_shapes": Expect(kernels={"relu_add_kernel": ("hop",)}, compiles=2, recompiles=1),
    "inplace": Expect(kernels={"add_inplace_kernel": ("hop",)}),
    "inline_asm": Expect(
        kernels={"asm_copy_kernel": ("hop",)}, fallback=("asm_copy_kernel",), compile_only_diagnostics=("interpreter",)
    ),
    "cond_kernel": Expect(kernels={"scale_kernel": ("hop",)}),
    "while_loop_kernel": Expect(kernels={"scale_kernel": ("hop",)}),
    "nested_region": Expect(kernels={"scale_kernel": ("hop",)}),
    "checkpoint_kernel": Expect(
        kernels={"scale_kernel": ("triton_op",)}, ops={"scale_kernel": "tisample_checkpoint_kernel::scale"}, backward=True
    ),
    "compiled_submodule": Expect(
        kernels={"scale_kernel": ("hop",)}, breaks=("torch._dynamo.graph_break()",) * 2, compiles=4
    ),
    # Issue 24's hazards: what each finds is checked in tests/test_hazards_e2e.py.
    "hazard_autotune_hooks": Expect(kernels={"scale_sum_kernel": ("hop",)}, pruned_configs={"scale_sum_kernel": 3}),
    "hazard_fp64_scalar": Expect(kernels={"gated_scale_kernel": ("hop",)}),
    "hazard_aliasing": Expect(kernels={"scale_then_shift_kernel": ("hop",)}),
    "hazard_view_clone": Expect(kernels={"row_loss_kernel": ("hop",)}),
    "hazard_clone_cost": Expect(kernels={"add_one_kernel": ("hop",)}),
}

#: Samples whose kernel runs inside a sub-graph or a nested compile (issue 22, item 2): `check_subgraphs`.
SUBGRAPH_SAMPLES = ("checkpoint_kernel", "compiled_submodule", "cond_kernel", "nested_region", "while_loop_kernel")

#: Samples whose compiled result is compared with eager (and with plain torch).
EAGER_SAMPLES = ("add_raw", "triton_op", "custom_op", "autograd_function")


# --- reading the samples' sources ----------------------------------------------------------


def sample_path(name: str) -> Path:
    return SAMPLES_DIR / f"{name}.py"


def line_of(path: Path, statement: str) -> int:
    """The line whose code starts with `statement` (docstrings mention it inside ``...``)."""
    lines = [n for n, text in enumerate(path.read_text().splitlines(), 1) if text.strip().startswith(statement)]
    assert len(lines) == 1, f"{statement!r} starts {len(lines)} lines of {path}"
    return lines[0]


def kernel_def(path: Path, kernel: str) -> ast.FunctionDef:
    tree = ast.parse(path.read_text())
    # ast.walk: a library may define its kernels under `if HAS_TRITON:` (torchnorm), not at the top level.
    defs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == kernel]
    assert len(defs) == 1, f"no single def {kernel} in {path}"
    return defs[0]


def kernel_first_line(path: Path, kernel: str) -> int:
    """The line `inspect.getsourcelines` and Inductor's `# Original path:` give: the first decorator."""
    fn = kernel_def(path, kernel)
    return min([d.lineno for d in fn.decorator_list] + [fn.lineno])


def _decorator_name(node: ast.expr) -> str:
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else node.id  # type: ignore[attr-defined]


def kernel_decorators(path: Path, kernel: str) -> list[str]:
    """`["autotune", "heuristics", "jit"]`, outermost first, as written."""
    return [_decorator_name(d) for d in kernel_def(path, kernel).decorator_list]


def kernel_constexprs(path: Path, kernel: str) -> list[str]:
    fn = kernel_def(path, kernel)
    return [a.arg for a in fn.args.args if isinstance(a.annotation, ast.Attribute) and a.annotation.attr == "constexpr"]


def kernel_pointer_params(path: Path, kernel: str) -> list[str]:
    """Parameters the kernel loads from or stores through (`tl.load(x_ptr + offs)`): its tensors."""
    fn = kernel_def(path, kernel)
    params = [a.arg for a in fn.args.args]
    used = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("load", "store"):
            target = node.args[0]
            while isinstance(target, ast.BinOp):
                target = target.left
            if isinstance(target, ast.Name):
                used.add(target.id)
    return [p for p in params if p in used]


def kernel_stored_params(path: Path, kernel: str) -> list[str]:
    """Pointer parameters the kernel stores through (`tl.store(out_ptr + offs, ...)`, `tl.atomic_add(...)`):
    its outputs."""
    fn = kernel_def(path, kernel)
    params = [a.arg for a in fn.args.args]
    stored = set()
    for node in ast.walk(fn):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and (node.func.attr == "store" or node.func.attr.startswith("atomic_"))):
            target = node.args[0]
            while isinstance(target, ast.BinOp):
                target = target.left
            if isinstance(target, ast.Name):
                stored.add(target.id)
    return [p for p in params if p in stored]


def _decorator_call(path: Path, kernel: str, name: str) -> ast.Call | None:
    for d in kernel_def(path, kernel).decorator_list:
        if isinstance(d, ast.Call) and _decorator_name(d) == name:
            return d
    return None


def autotune_configs(path: Path, kernel: str) -> list[dict[str, Any]]:
    """Each `triton.Config({...}, num_warps=...)` of the kernel's autotune decorator, as a dict."""
    call = _decorator_call(path, kernel, "autotune")
    if call is None:
        return []
    configs = next(k.value for k in call.keywords if k.arg == "configs")
    result = []
    for cfg in configs.elts:  # type: ignore[attr-defined]
        values = dict(ast.literal_eval(cfg.args[0]))
        values.update({k.arg: ast.literal_eval(k.value) for k in cfg.keywords})
        result.append(values)
    return result


def autotune_key(path: Path, kernel: str) -> list[str]:
    call = _decorator_call(path, kernel, "autotune")
    if call is None:
        return []
    return list(ast.literal_eval(next(k.value for k in call.keywords if k.arg == "key")))


def heuristic_names(path: Path, kernel: str) -> list[str]:
    call = _decorator_call(path, kernel, "heuristics")
    if call is None:
        return []
    return [ast.literal_eval(k) for k in call.args[0].keys]  # type: ignore[attr-defined]


# --- running the CLI -------------------------------------------------------------------------


def sigint_as_from_a_terminal() -> None:
    """`preexec_fn` for a run a test interrupts: SIGINT acts as a terminal's Ctrl-C. A job started in the
    background by a non-interactive shell (`pytest ... &`, nohup) ignores SIGINT, and every process under it
    inherits that: Python then never raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_cli(
    args: list[str], *, cwd: Path = REPO, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """`python -m tritoninspect ARGS` in a fresh process (forked from the test zygote: tests/_zygote.py)."""
    return zygote_run([sys.executable, "-m", "tritoninspect", *args], cwd=cwd, env=env or cli_env(), timeout=timeout)


class CliRuns:
    """CLI runs started up front, `workers` at a time; `get(key)` waits for one."""

    def __init__(self, workers: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers)
        self._futures: dict[str, Future[subprocess.CompletedProcess[str]]] = {}

    def submit(self, key: str, args: list[str], **kwargs: Any) -> None:
        self._futures[key] = self._pool.submit(run_cli, args, **kwargs)

    def get(self, key: str) -> subprocess.CompletedProcess[str]:
        return self._futures[key].result()

    def close(self) -> None:
        for future in self._futures.values():
            future.cancel()
        self._pool.shutdown(wait=True)


def explain(proc: subprocess.CompletedProcess[str]) -> str:
    return f"exit {proc.returncode}; stderr tail:\n{proc.stderr[-4000:]}"


def json_report(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The JSON report a successful `--json` run printed (stdout is only JSON)."""
    assert proc.returncode == 0, explain(proc)
    return json.loads(proc.stdout)


# --- checking a report against a sample --------------------------------------------------------


def kernels_by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    names = [k["name"] for k in report["kernels"]]
    assert len(names) == len(set(names)), f"kernel names repeat: {names}"
    return {k["name"]: k for k in report["kernels"]}


def occurrences(kernel: dict[str, Any], *stages: str) -> list[dict[str, Any]]:
    return [o for o in kernel["occurrences"] if o["stage"] in stages]


def dynamo_compile_ids(report: dict[str, Any]) -> list[str]:
    ids = {g["compile_id"] for g in report["graphs"] if g["stage"] == "dynamo"}
    return sorted(ids, key=lambda cid: tuple(int(p) for p in cid.split("/")))


def check_sample(name: str, report: dict[str, Any], *, mode: str) -> None:
    """Everything the sample's docstring promises, for a full (inductor-stage) run."""
    exp, src = EXPECTED[name], sample_path(name)
    assert report["schema_version"] == SCHEMA_VERSION
    assert report["failure"] is None, report["failure"]
    meta = report["meta"]
    assert (meta["mode"], meta["target"], meta["stage"]) == (mode, f"samples/{name}.py:Net", "inductor")
    assert meta["backward"] is exp.backward
    expected_sources = exp.compile_only_diagnostics if mode == "compile-only" else ()
    assert sorted({d["source"] for d in report["diagnostics"]}) == sorted(expected_sources), report["diagnostics"]
    assert report["mutation_fallbacks_unattributed"] == []

    kernels = kernels_by_name(report)
    assert {n: tuple(k["entries"]) for n, k in kernels.items()} == exp.kernels
    for kname, kernel in kernels.items():
        check_kernel_source(kernel, src)
        check_occurrences(kernel, exp, src)

    assert len(dynamo_compile_ids(report)) == exp.compiles
    assert len(report["recompiles"]) == exp.recompiles
    check_breaks(report, exp, src)
    assert {op["op"]: tuple(op["kernels"]) for op in report["opaque_ops"]} == exp.opaque
    for op in report["opaque_ops"]:
        assert op["stage"] in GRAPH_STAGES and op["node"]


def check_kernel_source(kernel: dict[str, Any], src: Path) -> None:
    """Location, decorators, constexprs, autotune configs and heuristics, against the source."""
    name = kernel["name"]
    assert Path(kernel["file"]).resolve() == src.resolve()
    assert kernel["line"] == kernel_first_line(src, name)
    assert kernel["decorators"] == kernel_decorators(src, name)
    assert kernel["constexpr_params"] == kernel_constexprs(src, name)
    assert kernel["missing_from_output_code"] == []
    expected_configs = autotune_configs(src, name)
    assert len(kernel["autotune_configs"]) == len(expected_configs)
    for got, want in zip(kernel["autotune_configs"], expected_configs):
        assert got.items() >= want.items(), f"config {got} lacks {want}"
    assert kernel["autotune_key"] == autotune_key(src, name)
    assert kernel["heuristics"] == heuristic_names(src, name)


def check_occurrences(kernel: dict[str, Any], exp: Expect, src: Path) -> None:
    name = kernel["name"]
    op = exp.ops.get(name)
    graph = occurrences(kernel, *GRAPH_STAGES)
    runtime = occurrences(kernel, "runtime")
    assert runtime and all(o["launches"] >= 1 for o in runtime), "the kernel never ran"
    assert {o["entry"] for o in kernel["occurrences"]} == set(kernel["entries"])
    if not set(kernel["entries"]) & set(VISIBLE):
        # custom_op / eager: Inductor never sees the launch, so no graph node holds it.
        assert graph == [] and occurrences(kernel, "output_code") == []
        assert all(o["custom_op"] == op for o in runtime)
        return
    assert graph, "no graph holds the kernel"
    for o in graph:
        assert o["in_output_code"] is True, o
        assert o["inductor_name"], o
    after_aot = occurrences(kernel, *AOT_STAGES)
    assert after_aot, "no AOT/post-grad occurrence"
    # Mutation analysis finds the stores; when it fails, every tensor is assumed written.
    written = kernel_pointer_params(src, name) if name in exp.fallback else kernel_stored_params(src, name)
    for o in after_aot:
        assert o["tensors_to_clone"] == written, o
        assert (o["mutation_analysis_fallback"] is not None) is (name in exp.fallback), o
        if op is not None:
            assert o["custom_op"] == op, o
    code = occurrences(kernel, "output_code")
    assert code and all(o["in_output_code"] is True for o in code)
    # Every compile whose graphs hold the kernel launches it from its output code.
    assert {o["compile_id"] for o in graph} <= {o["compile_id"] for o in code}
    configs = autotune_configs(src, name)
    declared = set(kernel_constexprs(src, name))
    for o in occurrences(kernel, "dynamo", *AOT_STAGES):
        if o["grid"] is not None:
            kept = exp.pruned_configs.get(name, max(1, len(configs)))
            assert len(o["grid"]) == kept, "one grid per autotune config (kept after pruning)"
        # tl.constexpr parameters apart from plain scalars such as n.
        assert set(o["constexprs"] or {}) <= declared, o
        assert not set(o["scalars"] or {}) & declared, o


def check_breaks(report: dict[str, Any], exp: Expect, src: Path) -> None:
    breaks = report["graph_breaks"]
    assert [b["line"] for b in breaks] == [line_of(src, stmt) for stmt in exp.breaks]
    for b in breaks:
        assert Path(b["file"]).resolve() == src.resolve()
        assert b["reason"].strip()
        assert b["user_stack"][-1].endswith(f":{b['line']} in forward")


def check_graph_break_compiles(report: dict[str, Any]) -> None:
    """graph_break.py: add_kernel in the first graph and in the last resume frame's graph."""
    ids = dynamo_compile_ids(report)
    add = kernels_by_name(report)["add_kernel"]
    assert {o["compile_id"] for o in occurrences(add, "dynamo")} == {ids[0], ids[-1]}
    scale = kernels_by_name(report)["scale_kernel"]
    assert [o["compile_id"] for o in scale["occurrences"]] == [None]


def check_autotune_grids(name: str, report: dict[str, Any]) -> None:
    """One grid per config: cdiv(n, BLOCK) with n the input size and BLOCK from the source."""
    (kernel,) = report["kernels"]
    n = int(report["meta"]["inputs"][0].split(":")[0])
    blocks = [cfg["BLOCK"] for cfg in autotune_configs(sample_path(name), kernel["name"])]
    want = [[-(-n // block), 1, 1] for block in blocks]
    for o in occurrences(kernel, "dynamo", *AOT_STAGES):
        assert o["grid"] == want


def check_dynamic_shapes(report: dict[str, Any], sizes: tuple[int, int] = (64, 96)) -> None:
    """Two compiles: static first (int grid), then symbolic after the size change."""
    (recompile,) = report["recompiles"]
    first, second = dynamo_compile_ids(report)
    assert recompile["compile_id"] == second
    assert str(sizes[0]) in recompile["reason"] and str(sizes[1]) in recompile["reason"]
    (kernel,) = report["kernels"]
    static = occurrences(kernel, "dynamo") + occurrences(kernel, *AOT_STAGES)
    static_grids = [o["grid"] for o in static if o["compile_id"] == first]
    symbolic_grids = [o["grid"] for o in static if o["compile_id"] == second]
    assert static_grids and symbolic_grids
    assert all(isinstance(v, int) for grid in static_grids for g in grid for v in g)
    for grid in symbolic_grids:
        assert any(isinstance(v, str) for g in grid for v in g), f"grid {grid} is not symbolic"


def check_backward(report: dict[str, Any]) -> None:
    """autograd_function.py: the kernel in the backward graph and the backward output code."""
    parts = {(g["stage"], g["part"]) for g in report["graphs"]}
    assert ("aot_backward", "backward") in parts and ("output_code", "backward") in parts
    (kernel,) = report["kernels"]
    assert occurrences(kernel, "aot_backward")
    assert {o["part"] for o in occurrences(kernel, "output_code")} == {"forward", "backward"}
    # One launch in forward, two in backward (one per gradient).
    assert sum(o["launches"] for o in occurrences(kernel, "runtime")) == 3


# --- compiled vs eager, in process --------------------------------------------------------------

_LOADED: dict[str, Any] = {}


def load_sample(name: str) -> Any:
    """Import samples/<name>.py once per process, under a name no other test uses."""
    if name not in _LOADED:
        module_name = f"_tritoninspect_test_sample_{name}"
        spec = importlib.util.spec_from_file_location(module_name, sample_path(name))
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[module_name] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        _LOADED[name] = module
    return _LOADED[name]


def reference(name: str, x: Any, w: Any) -> Any:
    """The samples' arithmetic in plain torch ops."""
    import torch

    if name == "autograd_function":
        return (x * w).tanh()
    return torch.cos(torch.sin(x) + w) * 2


def compiled_matches_eager(name: str, *, device: str, compile_only: bool) -> None:
    """Run the sample eagerly and compiled with the recording backend; compare both (and
    the gradients) with each other and with plain torch."""
    import torch

    from tritoninspect.capture.recorder import Recorder

    module = load_sample(name)
    torch.manual_seed(0)
    x, w = (t.detach().to(device).requires_grad_(name == "autograd_function") for t in module.example_inputs())
    net = module.Net().to(device)
    backward = name == "autograd_function"

    def run(fn: Any) -> tuple[Any, list[Any]]:
        a, b = (t.detach().clone().requires_grad_(backward) for t in (x, w))
        out = fn(a, b)
        if backward:
            out.sum().backward()
            return out.detach(), [a.grad, b.grad]
        return out, []

    eager, eager_grads = run(net)
    expected, expected_grads = run(lambda a, b: reference(name, a, b))
    torch.testing.assert_close(eager, expected)
    for got, want in zip(eager_grads, expected_grads):
        torch.testing.assert_close(got, want)

    recorder = Recorder("inductor", compile_only=compile_only)
    torch._dynamo.reset()
    try:
        with recorder.installed():
            out, grads = run(torch.compile(net, backend=recorder.backend))
    finally:
        torch._dynamo.reset()
    # The compiled module really ran Inductor's code, and the kernel ran inside it.
    assert recorder.capture.problems == []
    assert any(g.stage == "post_grad" for g in recorder.capture.graphs)
    assert any(la.in_graph for la in recorder.capture.launches), recorder.capture.launches
    torch.testing.assert_close(out, eager)
    assert len(grads) == len(eager_grads)
    for got, want in zip(grads, eager_grads):
        torch.testing.assert_close(got, want)


# --- kernels in sub-graphs (issue 22, item 2) -----------------------------------------------------


def _hoods(kernel: dict[str, Any]) -> list[dict[str, Any]]:
    return [n for o in occurrences(kernel, "output_code") for n in o["neighbourhood"] or ()]


def _runtime(kernel: dict[str, Any]) -> list[dict[str, Any]]:
    return occurrences(kernel, "runtime")


def _ops(neighbour: dict[str, Any] | None) -> list[str]:
    return list(neighbour["ops"]) if neighbour else []


def check_subgraphs(name: str, report: dict[str, Any]) -> None:
    """What the sample's docstring says about where its kernel runs: the sub-graph functions of
    the output code its launches are written in, what runs around them, launch counts, placement."""
    kernel = kernels_by_name(report)["scale_kernel"]
    reused = _reuses_nested_regions(report["meta"]["torch"])
    want = _AOT_SUBGRAPHS[name] if reused or name != "nested_region" else _NESTED_REGION_PER_CALL
    found = {o["subgraph"] for o in occurrences(kernel, *AOT_STAGES, "post_grad_final")}
    assert found == want, f"{name}: kernel nodes in sub-graphs {found} (torch {report['meta']['torch']})"
    if name == "nested_region":
        _check_nested_region(kernel, reused)
    else:
        _SUBGRAPH_CHECKS[name](kernel)


def _reuses_nested_regions(torch_version: str) -> bool:
    """Whether Dynamo traces a nested compile region holding a user Triton kernel once for all its calls.

    torch 2.13 does: its Dynamo reuses the first trace of a region for later calls with matching inputs
    without tracing them (torch/_dynamo/variables/invoke_subgraph.py, "Note: [invoke_subgraph subgraph
    reuse]"; pytorch/pytorch#176644, "[dynamo] Add subgraph reuse for invoke_subgraph"). torch 2.11 has no
    such reuse (no such file): it traces every call and keeps a trace only when its graph equals an earlier
    one (`are_same_graph_modules` in torch/_dynamo/variables/higher_order_ops.py), and a kernel's
    triton_kernel_wrapper_mutation node differs between traces (each trace stores the kernel's constant
    arguments anew: `constant_args_idx` 0, then 1; TORCH_LOGS=+hierarchical_compile says "Graph comparison
    failed at node (call_function): triton_kernel_wrapper_mutation"), so each call is its own sub-graph.
    Seen on 2.11 (the H200, and compile-only) and 2.13 (compile-only); 2.12 is not checked here."""
    major, minor = (int(part) for part in torch_version.split(".")[:2])
    return (major, minor) >= (2, 12)


#: The AOT and post-grad sub-graphs holding each sample's kernel nodes ("": the graph itself). Inductor
#: runs the post-grad passes on each sub-graph before the graph: its nodes keep the sub-graph's name.
_AOT_SUBGRAPHS = {
    "cond_kernel": {"true_graph_0", "false_graph_0"}, "while_loop_kernel": {"while_loop_body_graph_0"},
    "nested_region": {"repeated_subgraph0"}, "checkpoint_kernel": {""}, "compiled_submodule": {""},
}
#: nested_region where torch traces each call of the region as its own sub-graph (`_reuses_nested_regions`).
_NESTED_REGION_PER_CALL = {"repeated_subgraph0", "repeated_subgraph1"}


def _check_cond(kernel: dict[str, Any]) -> None:
    assert {o["subgraph"] for o in occurrences(kernel, "dynamo")} == {"cond_true_0", "cond_false_0"}
    assert {o["subgraph"] for o in occurrences(kernel, "aot_inference")} == {"true_graph_0", "false_graph_0"}
    hoods = _hoods(kernel)
    assert sorted(n["function"] for n in hoods) == ["false_graph_0", "true_graph_0"]
    for n in hoods:
        assert (n["function_kind"], n["call_sites"]) == ("torch.cond branch", 1), n
        assert "sum" in _ops(n["caller_before"]) and "cos" in _ops(n["caller_after"]), n
    (launch,) = _runtime(kernel)
    assert (launch["launches"], launch["function"], launch["placement"]) == (1, "true_graph_0", "inference")


def _check_while_loop(kernel: dict[str, Any]) -> None:
    assert {o["subgraph"] for o in occurrences(kernel, "dynamo")} == {"body_fn_0"}
    (hood,) = _hoods(kernel)
    assert (hood["function"], hood["function_kind"], hood["call_sites"]) == (
        "while_loop_body_graph_0", "while_loop body", 1)
    assert "add" in _ops(hood["after"]) + _ops(hood["before"]), hood
    assert "cos" in _ops(hood["caller_after"]), hood
    (launch,) = _runtime(kernel)
    assert (launch["launches"], launch["function"]) == (3, "while_loop_body_graph_0")


def _check_nested_region(kernel: dict[str, Any], reused: bool = True) -> None:
    """One body called from 2 places, 2 launches in it; without reuse (torch 2.11) one body per call,
    each called once and launching once."""
    dynamo = {"subgraph_0"} if reused else {"subgraph_0", "subgraph_1"}
    bodies = ["repeated_subgraph0"] if reused else ["repeated_subgraph0", "repeated_subgraph1"]
    assert {o["subgraph"] for o in occurrences(kernel, "dynamo")} == dynamo
    hoods = sorted(_hoods(kernel), key=lambda n: n["function"])
    assert [(n["function"], n["function_kind"], n["call_sites"]) for n in hoods] == [
        (body, "invoke_subgraph body", 2 if reused else 1) for body in bodies]
    for hood in hoods:
        assert "relu" in _ops(hood["after"]), hood
    launches = sorted((o["function"], o["launches"]) for o in _runtime(kernel))
    assert launches == ([("repeated_subgraph0", 2)] if reused else [(body, 1) for body in bodies])


def _check_checkpoint(kernel: dict[str, Any]) -> None:
    assert [o["placement"] for o in occurrences(kernel, "aot_forward")] == ["forward"]
    assert sorted(o["placement"] for o in occurrences(kernel, "aot_backward")) == ["backward", "recompute"]
    assert sorted(n["recompute"] for n in _hoods(kernel) if n["part"] == "backward") == [False, True]
    counts: dict[str, int] = {}
    for o in _runtime(kernel):
        counts[o["placement"]] = counts.get(o["placement"], 0) + o["launches"]
    assert counts == {"forward": 1, "backward": 1, "recompute": 1}


def _check_compiled_submodule(kernel: dict[str, Any]) -> None:
    launched = {o["compile_id"] for o in _runtime(kernel)}
    assert launched == {o["compile_id"] for o in occurrences(kernel, "dynamo")} and len(launched) == 2
    assert all(o["entry"] == "hop" and o["function"] == "call" for o in _runtime(kernel))


_SUBGRAPH_CHECKS = {
    "cond_kernel": _check_cond, "while_loop_kernel": _check_while_loop, "nested_region": _check_nested_region,
    "checkpoint_kernel": _check_checkpoint, "compiled_submodule": _check_compiled_submodule,
}
