"""Real-library tier (issue 12 item 5): small models on kernels from Liger-Kernel and
flash-linear-attention (fla-core), through the real CLI in compile-only mode, checked against the
facts their docstrings state (tests/reallib/*.py).

Unlike the samples, these kernels were written by others: they probe the device at import and at
call time, route through their own dispatchers (some ``torch.compiler.disable``\\ d), take float
scalars, call libdevice, hide ``.item()`` in an ``autograd.Function``. Each model's facts are
checked in four parts (the run itself, kernels and entry kinds, graph breaks, diagnostics) plus a
few targeted checks. What is wrong today is marked ``xfail(strict=True, reason="issue 12: ...")``,
so a fix turns the test into an unexpected pass and the mark must go.

The facts are pinned to the library versions below (kernel files and lines, dispatcher layout);
a model whose library is missing, or at another version, is skipped with the reason. The `test`
extra pins them all (``pip install -e '.[test]'``, what .ci/run does; pyproject.toml).

Issue 22 added three libraries a new user would try, each installed without compiling CUDA:
triformer (raw launches from ``autograd.Function``\\ s, a Python bool and ``num_warps`` as kernel
arguments), torchnorm (its kernels launch only ``if x.is_cuda``: in compile-only mode, whose
tensors are CPU tensors, none does, and the report says why) and moe-ops (autotuned kernels inside
opaque custom ops). Where compile-only mode differs from a GPU run by design, the model's facts
say how (`Probed`, `CpuTensors`); `test_gpu_mode` checks the GPU facts.

Every run this file needs is started once, up front, in one pool of two workers, like
tests/test_samples.py (each CLI run compiles in a fresh interpreter: 30-60 s here).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pytest

from _expect import (
    GRAPH_STAGES,
    REPO,
    CliRuns,
    cli_env,
    explain,
    json_report,
    kernel_first_line,
    kernels_by_name,
    line_of,
    occurrences,
    run_cli,
)

pytestmark = [pytest.mark.slow, pytest.mark.reallib]

REALLIB = REPO / "tests" / "reallib"
#: Forced compile-only mode, so the checks hold on a GPU machine too.
CPU = ["--device", "cpu"]

#: Import name -> (distribution, pinned version).
LIBRARIES = {
    "liger_kernel": ("liger-kernel", "0.8.5"), "fla": ("fla-core", "0.6.0"),
    "triformer": ("triformer", "3.0.7"), "torchnorm": ("torchnorm", "0.1.2"), "moe_ops": ("moe-ops", "0.1.0"),
}

#: Liger's device probe: `infer_device()` asks `torch.cuda.is_available()` (liger_kernel/utils.py:47);
#: on a machine without a GPU it answers False, honestly, and infer_device goes on to
#: `from transformers.utils import ...` (utils.py:62), a graph break ("Import failure") inside the
#: traced forward that a GPU run, where it answers True, does not have. Compile-only mode
#: reports the probe and marks each break that follows it (`device_probe`).
LIGER_PROBE = ("utils.py", 47, "infer_device")


def probing() -> bool:
    """Whether compile-only runs here answer `torch.cuda.is_available()` False (no GPU), so
    the models' device probes take their CPU path (on the GPU machine they do not)."""
    import torch

    return not torch.cuda.is_available()


@dataclass(frozen=True)
class Probed:
    """What changes where `torch.cuda.is_available()` answers False (no GPU): the breaks after
    the library's device probe, and the `Real` fields they change."""

    #: (file in the library package, line, function) of the probe the breaks follow.
    probe: tuple[str, int, str]
    #: The statement (as it starts in the model file) the breaks happen at.
    at: str
    #: The headlines of the breaks that follow it.
    headlines: frozenset[str]
    #: Real fields that differ on such a machine (e.g. a backward that now runs eagerly).
    changes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CpuTensors:
    """What changes in compile-only mode because its tensors are CPU tensors, on any machine: the
    places the library asks a tensor whether it is on CUDA and hears no, and the `Real` fields that
    differ from a GPU run there."""

    #: (file in the library package, line, function, what was asked: "x.is_cuda" / "x.device.type").
    probes: tuple[tuple[str, int, str, str], ...]
    changes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Real:
    """One model's docstring, as data."""

    #: Import name of the library the kernels come from (a key of LIBRARIES).
    library: str
    #: kernel -> entry kinds, in the report's order (hop, triton_op, custom_op, eager).
    kernels: dict[str, tuple[str, ...]]
    #: kernel -> the library file defining it, relative to the library's package directory.
    files: dict[str, str]
    #: kernel -> the triton_op / custom_op it runs in.
    ops: dict[str, str] = field(default_factory=dict)
    #: Opaque custom op -> kernels launched inside it.
    opaque: dict[str, tuple[str, ...]] = field(default_factory=dict)
    backward: bool = True
    #: Distinct compile ids of Dynamo graphs (None: not checked, it depends on where Dynamo resumes).
    compiles: int | None = 1
    recompiles: int = 0
    #: The statement (as it starts in the model file) every graph break happens at; None: no break.
    breaks_at: str | None = None
    #: The headlines (Dynamo's gb_type) the breaks have, as a set.
    break_headlines: frozenset[str] = frozenset()
    #: The kernel the first break concerns ("launched eagerly from this line").
    break_kernel: str | None = None
    #: kernel -> decorators as reported, outermost first (checked when given).
    decorators: dict[str, list[str]] = field(default_factory=dict)
    #: kernel -> (number of autotune configs, autotune key, heuristics) (checked when given).
    autotune: dict[str, tuple[int, list[str], list[str]]] = field(default_factory=dict)
    #: Kernels Triton's interpreter cannot run: compile-only mode skips their launches with an
    #: `interpreter` warning. (None since compile-only mode passes floats as typed scalars and runs
    #: libdevice in numpy: Liger's norms, SwiGLU and GEGLU were listed here.)
    interpreter_skips: frozenset[str] = frozenset()
    #: part ("runs", "kernels", "breaks", "diagnostics", or a targeted check) -> xfail reason.
    xfail: dict[str, str] = field(default_factory=dict)
    #: What a device probe of the library changes on a machine without a GPU (None: no probe
    #: sends the traced code another way).
    probed: Probed | None = None
    #: What compile-only mode's CPU tensors change (None: no tensor-device probe matters).
    cpu_tensors: CpuTensors | None = None
    #: kernel -> its Python bool parameters, which compile-only mode passes to a Triton interpreter
    #: older than 3.8 as int1 (a note; that interpreter rejects a bool).
    bools: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Real fields that differ where Dynamo raises a call's argument-binding failure as the TypeError
    #: eager would (torch 2.14, https://github.com/pytorch/pytorch/pull/190797) instead of breaking the
    #: graph at the call ("failed to bind arguments when attempting to inline", torch 2.11-2.13).
    bind_error_raised: dict[str, Any] = field(default_factory=dict)


def dynamo_raises_bind_errors() -> bool:
    """Dynamo turns an inlined call's argument-binding failure into an observed TypeError (its marker
    class `BindArgsTypeError`, torch/_dynamo/variables/functions.py, came with pytorch/pytorch#190797)."""
    import torch._dynamo.variables.functions as functions

    return hasattr(functions, "BindArgsTypeError")


GEGLU = "ops/geglu.py"
EXPECTED: dict[str, Real] = {
    "liger_rms_norm": Real(
        library="liger_kernel",
        kernels={"_rms_norm_forward_kernel": ("hop",), "_rms_norm_backward_kernel": ("hop",)},
        files={"_rms_norm_forward_kernel": "ops/rms_norm.py", "_rms_norm_backward_kernel": "ops/rms_norm.py"},
    ),
    "liger_layer_norm": Real(
        library="liger_kernel",
        kernels={"_layer_norm_forward_kernel": ("eager",), "_layer_norm_backward_kernel": ("eager",)},
        files={"_layer_norm_forward_kernel": "ops/layer_norm.py", "_layer_norm_backward_kernel": "ops/layer_norm.py"},
        compiles=2,
        breaks_at="h = self.norm(h)",
        break_headlines=frozenset({"Skip calling `torch.compiler.disable()`d function"}),
        break_kernel="_layer_norm_forward_kernel",
    ),
    "liger_swiglu": Real(
        library="liger_kernel",
        kernels={"_swiglu_forward_kernel": ("hop",), "_swiglu_backward_kernel": ("hop",)},
        files={"_swiglu_forward_kernel": "ops/swiglu.py", "_swiglu_backward_kernel": "ops/swiglu.py"},
        # The breaks at the probe (in swiglu_forward, inside the autograd.Function's forward) make
        # Dynamo give up on the Function: autograd runs its backward eagerly, and Dynamo compiles
        # the forward's frames as they run, resuming after each break.
        probed=Probed(LIGER_PROBE, "return self.down_proj(", frozenset({"Import failure"}), changes={
            "kernels": {"_swiglu_forward_kernel": ("hop",), "_swiglu_backward_kernel": ("eager",)},
            "compiles": None}),
    ),
    "liger_rope": Real(
        library="liger_kernel",
        kernels={"_triton_rope": ("hop",)},
        files={"_triton_rope": "ops/rope.py"},
    ),
    "liger_cross_entropy": Real(
        library="liger_kernel",
        kernels={"liger_cross_entropy_kernel": ("hop",), "element_mul_kernel": ("eager",)},
        files={"liger_cross_entropy_kernel": "ops/cross_entropy.py", "element_mul_kernel": "ops/utils.py"},
        compiles=None,
        breaks_at="loss = LigerCrossEntropyFunction.apply(logits, target, None)[0]",
        break_headlines=frozenset({
            "Unsupported Tensor.item() call with capture_scalar_outputs=False",
            "Data-dependent branching",
        }),
        # After the asserts, the frame that resumes reaches `infer_device_arch()` (cross_entropy.py:423).
        probed=Probed(LIGER_PROBE, "loss = LigerCrossEntropyFunction.apply(", frozenset({"Import failure"})),
    ),
    "liger_disabled": Real(
        library="liger_kernel",
        kernels={"_geglu_tanh_forward_kernel": ("eager",)},
        files={"_geglu_tanh_forward_kernel": GEGLU},
        backward=False,
        compiles=2,
        breaks_at="h = gelu_mul(a, b)",
        break_headlines=frozenset({"Skip calling `torch.compiler.disable()`d function"}),
        break_kernel="_geglu_tanh_forward_kernel",
    ),
    "liger_triton_op": Real(
        library="liger_kernel",
        kernels={"_geglu_tanh_forward_kernel": ("triton_op",), "_geglu_tanh_backward_kernel": ("triton_op",)},
        files={"_geglu_tanh_forward_kernel": GEGLU, "_geglu_tanh_backward_kernel": GEGLU},
        ops={
            "_geglu_tanh_forward_kernel": "reallib_liger_triton_op::geglu",
            "_geglu_tanh_backward_kernel": "reallib_liger_triton_op::geglu_backward",
        },
    ),
    "liger_custom_op": Real(
        library="liger_kernel",
        kernels={"_geglu_tanh_forward_kernel": ("custom_op",), "_geglu_tanh_backward_kernel": ("custom_op",)},
        files={"_geglu_tanh_forward_kernel": GEGLU, "_geglu_tanh_backward_kernel": GEGLU},
        ops={
            "_geglu_tanh_forward_kernel": "reallib_liger_custom_op::geglu",
            "_geglu_tanh_backward_kernel": "reallib_liger_custom_op::geglu_backward",
        },
        opaque={
            "reallib_liger_custom_op::geglu": ("_geglu_tanh_forward_kernel",),
            "reallib_liger_custom_op::geglu_backward": ("_geglu_tanh_backward_kernel",),
        },
    ),
    "fla_mean_pooling": Real(
        library="fla",
        kernels={"mean_pooling_fwd_kernel": ("hop",), "mean_pooling_bwd_kernel": ("hop",)},
        files={"mean_pooling_fwd_kernel": "ops/utils/pooling.py", "mean_pooling_bwd_kernel": "ops/utils/pooling.py"},
        compiles=2,
        recompiles=1,
        decorators={k: ["heuristics", "autotune", "jit"] for k in ("mean_pooling_fwd_kernel", "mean_pooling_bwd_kernel")},
        autotune={k: (16, ["BT"], ["IS_VARLEN"]) for k in ("mean_pooling_fwd_kernel", "mean_pooling_bwd_kernel")},
    ),
    "fla_l2norm": Real(
        library="fla",
        kernels={"l2norm_fwd_kernel": ("eager",), "l2norm_bwd_kernel": ("eager",)},
        files={"l2norm_fwd_kernel": "modules/norm/l2norm.py", "l2norm_bwd_kernel": "modules/norm/l2norm.py"},
        compiles=3,
        breaks_at="h = l2norm(h)",
        break_headlines=frozenset({"Skip calling `torch.compiler.disable()`d function"}),
        break_kernel="l2norm_fwd_kernel",
        # fla_cache_autotune's CachedAutotuner is a triton Autotuner: reported as @autotune.
        decorators={k: ["autotune", "jit"] for k in ("l2norm_fwd_kernel", "l2norm_bwd_kernel")},
        autotune={k: (25, ["D", "NB"], []) for k in ("l2norm_fwd_kernel", "l2norm_bwd_kernel")},
    ),
    "triformer_softmax": Real(
        library="triformer",
        kernels={"softmax_kernel_forward": ("hop",), "softmax_kernel_backward": ("eager",)},
        files={"softmax_kernel_forward": "softmax.py", "softmax_kernel_backward": "softmax.py"},
        # Dynamo cannot bind the classmethod forward's (self, ctx, ...): the model's frame breaks
        # twice, the Function's forward compiles as a frame of its own, its backward runs eagerly.
        compiles=3,
        breaks_at="return self.softmax(torch.sin(x)) * 2",
        break_headlines=frozenset({"failed to bind arguments when attempting to inline"}),
        bools={"softmax_kernel_forward": ("is_causal",)},
        # Raised as a TypeError that nothing in the model catches: Dynamo skips the model's frame (at
        # the same line, twice), only the Function's forward compiles (under no_grad: no backward graph).
        bind_error_raised={"compiles": 1, "backward": False, "break_headlines": frozenset({"Observed exception"})},
    ),
    "triformer_swiglu": Real(
        library="triformer",
        kernels={"swiglu_forward_optimized": ("hop",), "swiglu_backward_optimized": ("hop",)},
        files={"swiglu_forward_optimized": "swiglu.py", "swiglu_backward_optimized": "swiglu.py"},
    ),
    "torchnorm_rms_norm": Real(
        library="torchnorm",
        kernels={"_rms_norm_fwd_kernel": ("hop",), "_rms_norm_bwd_kernel": ("hop",)},
        files={"_rms_norm_fwd_kernel": "_triton.py", "_rms_norm_bwd_kernel": "_triton.py"},
        # `if _TRITON and x.is_cuda:` (torchnorm/rms_norm.py:40): CPU tensors take F.rms_norm.
        cpu_tensors=CpuTensors((("rms_norm.py", 40, "forward", "x.is_cuda"),), changes={"kernels": {}}),
    ),
    "moe_ops_topk_softmax": Real(
        library="moe_ops",
        kernels={"_fused_topk_softmax_fwd_kernel_2d": ("custom_op",), "_fused_topk_softmax_bwd_kernel_2d": ("custom_op",)},
        files={k: "fused_topk_softmax_ops.py" for k in ("_fused_topk_softmax_fwd_kernel_2d",
                                                         "_fused_topk_softmax_bwd_kernel_2d")},
        ops={"_fused_topk_softmax_fwd_kernel_2d": "tg::fused_topk_softmax_fwd",
             "_fused_topk_softmax_bwd_kernel_2d": "tg::fused_topk_softmax_bwd"},
        opaque={"tg::fused_topk_softmax_fwd": ("_fused_topk_softmax_fwd_kernel_2d",),
                "tg::fused_topk_softmax_bwd": ("_fused_topk_softmax_bwd_kernel_2d",)},
        decorators={k: ["autotune", "jit"] for k in ("_fused_topk_softmax_fwd_kernel_2d",
                                                     "_fused_topk_softmax_bwd_kernel_2d")},
        autotune={"_fused_topk_softmax_fwd_kernel_2d": (5, ["num_tokens", "E"], []),
                  "_fused_topk_softmax_bwd_kernel_2d": (5, ["num_tokens", "K"], [])},
    ),
}
MODELS = sorted(EXPECTED)
#: Models whose gpu-mode and forced compile-only reports from the GPU machine are not stored yet
#: (tests/fixtures/gpu-reallib/{gpu,compile-only}/<model>.json, as tests/fixtures/README.md says):
#: once scripts/gpu-reallib ran there, copy its gpu/ and cpu/ reports in and remove the names
#: (tests/test_agreement.py fails on a name whose reports are stored).
AWAITING_GPU_REPORTS: frozenset[str] = frozenset()


# --- which libraries are here ------------------------------------------------------------


def library_dir(library: str) -> Path:
    """The installed package's directory, found without importing it (importing probes the device)."""
    spec = importlib.util.find_spec(library)
    assert spec is not None and spec.submodule_search_locations, library
    return Path(list(spec.submodule_search_locations)[0])


def missing(library: str) -> str | None:
    """Why models on `library` cannot run here, or None."""
    dist, pinned = LIBRARIES[library]
    try:
        found = version(dist)
    except PackageNotFoundError:
        return f"{dist} is not installed (pip install {dist}=={pinned}; see .ci/run)"
    if importlib.util.find_spec(library) is None:
        return f"{dist} {found} is installed but `{library}` is not importable"
    if found != pinned:
        return f"the facts are for {dist} {pinned}, found {found}"
    return None


def skip_unless_available(name: str) -> None:
    reason = missing(EXPECTED[name].library)
    if reason is not None:
        pytest.skip(reason)


def params(what: str, names: list[str] | None = None) -> list[Any]:
    """`names` as pytest params, each marked xfail(strict) when its model has a known failure in `what`."""
    result = []
    for name in names or MODELS:
        reason = EXPECTED[name].xfail.get(what)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        result.append(pytest.param(name, marks=marks, id=name))
    return result


# --- the runs, started once ---------------------------------------------------------------


#: The model also run with --resources, in a cold Triton cache.
RESOURCES = "liger_rope"


def wanted(session: pytest.Session) -> tuple[set[str], bool]:
    """The models the selected tests of this file need (all of them, unless -k / ids narrow it),
    and whether the --resources run is needed."""
    names: set[str] = set()
    resources = False
    for item in session.items:
        if item.module is None or Path(str(item.fspath)).resolve() != Path(__file__).resolve():
            continue
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "name" in callspec.params:
            names.add(callspec.params["name"])
        elif item.name == "test_resources_in_a_cold_cache":
            resources = True
        elif item.name == "test_rope_writes_q_and_k_in_place":
            names.add("liger_rope")
        elif item.name == "test_a_probe_break_fails_check_saying_why":
            names.add("liger_swiglu")
    return names, resources


#: A folder of runs scripts/gpu-reallib made (`cpu/<key>.json|.err|.rc`, `gpu/...`): the tests read
#: them instead of running the CLI again (on the GPU machine, where device time is short).
SAVED_RUNS = "TRITONINSPECT_REALLIB_RUNS"


class SavedRuns:
    """`CliRuns.get` over runs saved by scripts/gpu-reallib: key "<model>" is compile-only mode
    (cpu/), "gpu <model>" gpu mode (gpu/), "<model> --resources" compile-only with --resources
    (resources/)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def get(self, key: str) -> subprocess.CompletedProcess[str]:
        mode, name = key.split(" ", 1) if key.startswith("gpu ") else ("cpu", key)
        if name.endswith(" --resources"):
            mode, name = "resources", name.removesuffix(" --resources")
        base = self.root / mode / name
        if not base.with_suffix(".rc").exists():
            pytest.skip(f"{base}.rc: no saved run (scripts/gpu-reallib writes one per model and mode)")
        rc = int(base.with_suffix(".rc").read_text().strip() or 1)
        return subprocess.CompletedProcess([str(base)], rc, base.with_suffix(".json").read_text(),
                                           base.with_suffix(".err").read_text())

    def close(self) -> None:
        return None


def gpu_here() -> bool:
    import torch

    return torch.cuda.is_available()


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    if os.environ.get(SAVED_RUNS):
        yield SavedRuns(Path(os.environ[SAVED_RUNS]))
        return
    names, resources = wanted(request.session)
    cli = CliRuns(workers=2)
    for name in MODELS:
        if name in names and missing(EXPECTED[name].library) is None:
            cli.submit(name, ["graph", f"tests/reallib/{name}.py:Net", "--json", *CPU])
            if gpu_here():
                cli.submit(f"gpu {name}", ["graph", f"tests/reallib/{name}.py:Net", "--json", "--device", "cuda"])
    if resources and missing(EXPECTED[RESOURCES].library) is None:
        cache = tmp_path_factory.mktemp("triton-cache")
        cli.submit(f"{RESOURCES} --resources", ["graph", f"tests/reallib/{RESOURCES}.py:Net", "--json", "--resources", *CPU],
                   env=cli_env(TRITON_CACHE_DIR=str(cache)))
    yield cli
    cli.close()


def expected(name: str) -> Real:
    """The model's facts in compile-only mode on this machine: with `Probed.changes` where its
    device probe answers for the CPU (no GPU here), `CpuTensors.changes` (any machine), and
    `bind_error_raised` where this torch's Dynamo raises argument-binding failures."""
    exp = EXPECTED[name]
    if exp.probed is not None and probing():
        exp = dataclasses.replace(exp, **exp.probed.changes)
    if exp.cpu_tensors is not None:
        exp = dataclasses.replace(exp, **exp.cpu_tensors.changes)
    if exp.bind_error_raised and dynamo_raises_bind_errors():
        exp = dataclasses.replace(exp, **exp.bind_error_raised)
    return exp


def report(runs: CliRuns, name: str) -> dict[str, Any]:
    skip_unless_available(name)
    return json_report(runs.get(name))


def model_path(name: str) -> Path:
    return REALLIB / f"{name}.py"


# --- every model: four parts ----------------------------------------------------------------


def test_every_model_has_an_expectation() -> None:
    assert sorted(p.stem for p in REALLIB.glob("[a-z]*.py")) == MODELS


@pytest.mark.parametrize("name", params("runs"))
def test_runs_in_compile_only_mode(runs: CliRuns, name: str) -> None:
    """Exit 0, stdout is the JSON report and nothing else, for this model in compile-only mode."""
    skip_unless_available(name)
    proc = runs.get(name)
    assert proc.returncode == 0, explain(proc)
    rep = json_report(proc)  # json.loads of all of stdout: a library print would break it
    exp = EXPECTED[name]
    meta = rep["meta"]
    assert (meta["mode"], meta["target"], meta["stage"]) == ("compile-only", f"tests/reallib/{name}.py:Net", "inductor")
    assert meta["backward"] is exp.backward


@pytest.mark.parametrize("name", params("kernels"))
def test_kernels_and_entries(runs: CliRuns, name: str) -> None:
    """Every kernel, where the library defines it, how it entered, in which op, that it ran."""
    check_kernels(report(runs, name), expected(name))


def check_kernels(rep: dict[str, Any], exp: Real) -> None:
    kernels = kernels_by_name(rep)
    assert {n: tuple(k["entries"]) for n, k in kernels.items()} == exp.kernels
    lib = library_dir(exp.library)
    for kname, kernel in kernels.items():
        src = lib / exp.files[kname]
        assert Path(kernel["file"]).resolve() == src.resolve(), kernel["file"]
        assert kernel["line"] == kernel_first_line(src, kname)
        assert kernel["missing_from_output_code"] == []
        if kname in exp.decorators:
            assert kernel["decorators"] == exp.decorators[kname]
        if kname in exp.autotune:
            count, key, heuristics = exp.autotune[kname]
            assert (len(kernel["autotune_configs"]), kernel["autotune_key"], kernel["heuristics"]) == (count, key, heuristics)
        runtime = occurrences(kernel, "runtime")
        assert runtime and all(o["launches"] >= 1 for o in runtime), "the kernel never launched"
        graph = occurrences(kernel, *GRAPH_STAGES)
        op = exp.ops.get(kname)
        if set(kernel["entries"]) <= {"custom_op", "eager"}:
            assert graph == [], "a custom_op / eager kernel has no graph node"
            assert all(o["custom_op"] == op for o in runtime)
        else:
            assert graph and all(o["in_output_code"] is True for o in graph), graph
            for o in occurrences(kernel, "aot_forward", "aot_backward", "aot_inference", "post_grad"):
                assert o["custom_op"] == op, o
    assert {o["op"]: tuple(o["kernels"]) for o in rep["opaque_ops"]} == exp.opaque
    from tools.agreement import device_guards

    # On a GPU, fla's input_guard enters torch.cuda.device() for CUDA tensors: a compile whose graph
    # holds only those device-guard nodes (fla_l2norm) is not one of the model's compiles.
    compile_ids = {g["compile_id"] for g in rep["graphs"] if g["stage"] == "dynamo"
                   and not (g["op_count"] and g["op_count"] == device_guards(g["code"]))}
    assert exp.compiles is None or len(compile_ids) == exp.compiles, sorted(compile_ids)
    assert len(rep["recompiles"]) == exp.recompiles
    if exp.backward:
        assert any(g["stage"] == "aot_backward" for g in rep["graphs"]), "no backward graph"


@pytest.mark.parametrize("name", params("breaks"))
def test_graph_breaks(runs: CliRuns, name: str) -> None:
    """Breaks where the docstring says (the model's own line), with the headlines it says, or none;
    the breaks that follow a device probe answered for the CPU are checked apart (below)."""
    check_breaks(report(runs, name), expected(name), name)


def check_breaks(rep: dict[str, Any], exp: Real, name: str) -> None:
    breaks = [b for b in rep["graph_breaks"] if b.get("device_probe") is None]
    if exp.breaks_at is None:
        assert breaks == [], [(b["headline"], b["library_frame"]) for b in breaks]
        return
    src = model_path(name)
    line = line_of(src, exp.breaks_at)
    assert breaks
    assert {b["headline"] for b in breaks} == exp.break_headlines
    for b in breaks:
        assert (Path(b["file"]).resolve(), b["line"]) == (src.resolve(), line), (b["compile_id"], b["file"], b["line"])
    assert breaks[0]["kernel"] == exp.break_kernel


@pytest.mark.parametrize("name", params("probe_breaks"))
def test_breaks_after_a_device_probe_are_marked(runs: CliRuns, name: str) -> None:
    """Without a GPU, Liger's infer_device() hears torch.cuda.is_available() False (honestly) and goes
    on to an import that breaks the graph; a GPU run answers True and does not. Exactly the breaks
    whose user stack runs through the probing function carry `device_probe` naming it, the report
    lists the probe in a warning, and the text says what it means. With a GPU: no probe, no mark."""
    rep, exp = report(runs, name), EXPECTED[name]
    probed = [b for b in rep["graph_breaks"] if b.get("device_probe") is not None]
    notes = [d for d in rep["diagnostics"] if "torch.cuda.is_available() answered False" in d["message"]]
    if exp.probed is None or not probing():
        assert probed == [], [(b["compile_id"], b["headline"], b["device_probe"]) for b in probed]
        assert all(d["severity"] == "note" for d in notes), notes
        return
    file, line, function = exp.probed.probe
    place = f"{library_dir(exp.library) / file}:{line} in {function}"
    assert probed, "no break marked as following the device probe"
    for b in rep["graph_breaks"]:
        through = any(f.startswith(f"{library_dir(exp.library) / file}:") and f.endswith(f" in {function}")
                      for f in b["user_stack"])
        assert (b.get("device_probe") is not None) is through, (b["compile_id"], b["headline"], b["user_stack"])
    assert {Path(b["device_probe"].rsplit(":", 1)[0]).resolve() for b in probed} == {Path(place.rsplit(":", 1)[0]).resolve()}
    assert {b["device_probe"].rsplit(":", 1)[1] for b in probed} == {f"{line} in {function}"}
    assert {b["headline"] for b in probed} == exp.probed.headlines
    src = model_path(name)
    assert {(Path(b["file"]).resolve(), b["line"]) for b in probed} == {(src.resolve(), line_of(src, exp.probed.at))}
    (note,) = notes
    assert note["severity"] == "warning" and note["source"] == "compile-only"
    assert f"{file}:{line} in {function}" in note["message"]
    assert (f"{len(probed)} graph breaks follow such a probe" if len(probed) > 1
            else "1 graph break follows such a probe") in note["message"]


def test_a_probe_break_fails_check_saying_why(runs: CliRuns, tmp_path: Path) -> None:
    """`check --no-breaks` on a report with breaks after a device probe fails (compile-only mode
    cannot tell whether the GPU run breaks there), and the failure says which and why; the text
    report marks each such break."""
    name = "liger_swiglu"
    rep = report(runs, name)
    if not probing():
        pytest.skip("a GPU is available: the device probe answers True, no break follows it")
    saved = tmp_path / "swiglu.json"
    saved.write_text(json.dumps(rep))
    check = run_cli(["check", str(saved), "--no-breaks"])
    assert check.returncode == 1, explain(check)
    probed = sum(b.get("device_probe") is not None for b in rep["graph_breaks"])
    assert "of them after a device probe answered for the CPU in compile-only mode" in check.stdout
    assert f"{probed} of them" in check.stdout and "(after the device probe at " in check.stdout
    text = run_cli(["graph", str(saved)])
    assert text.returncode == 0, explain(text)
    assert f"({probed} after a compile-only device probe)" in text.stdout
    assert "follows a device probe answered for the CPU in compile-only" in " ".join(text.stdout.split())


@pytest.mark.parametrize("name", params("diagnostics"))
def test_diagnostics(runs: CliRuns, name: str) -> None:
    """Interpreter warnings for exactly the kernels it cannot run; nothing worse than a warning; other
    warnings only for breaks after a device probe (test_breaks_after_a_device_probe_are_marked) and for
    tensor-device probes when no kernel launched (test_tensor_device_probes_are_named); no compile
    warning (triformer's `num_warps` parameter made one on every launch)."""
    from tritoninspect.analyse.emulation import TENSOR_PROBE_NOTE

    rep, exp = report(runs, name), EXPECTED[name]
    assert rep["mutation_fallbacks_unattributed"] == []
    skipped, old_interpreter = set(), set()
    for d in rep["diagnostics"]:
        assert d["severity"] in ("note", "warning"), d
        if d["source"] == "interpreter" and d["severity"] == "note":
            assert d["message"].startswith("Python bool arguments passed to Triton's interpreter as int1"), d
        elif d["source"] == "compile-only" and d["message"].startswith(TENSOR_PROBE_NOTE):
            assert d["severity"] == "note" or (exp.cpu_tensors is not None and not rep["kernels"]), d
        elif d["source"] == "interpreter":
            # "<kernel> compiled for sm_90, but Triton's interpreter could not run it (...)" (the kernel
            # compiled for real first), or "<kernel> could not run in Triton's interpreter (...)".
            kernel = re.split(r" compiled for \S+, but Triton's interpreter| could not run in Triton's interpreter",
                              d["message"], maxsplit=1)[0]
            (old_interpreter if OLD_INTERPRETER_ERROR in d["message"] else skipped).add(kernel)
        elif not d["message"].startswith("torch.cuda.is_available() answered False"):
            assert d["severity"] == "note", d
    if _triton_before(rep, (3, 7)):
        # Triton 3.6's interpreter may stop at OLD_INTERPRETER_ERROR before the expected reason.
        assert skipped <= exp.interpreter_skips <= skipped | old_interpreter, (skipped, old_interpreter)
    else:
        assert not old_interpreter and skipped == exp.interpreter_skips, (skipped, old_interpreter)


#: Triton 3.6's interpreter turns a one-element array into a Python scalar where NumPy 2 wants a
#: 0-d one (seen on the H200 machine, triton 3.6.0, for Liger's cross entropy and layer-norm
#: backward kernels); Triton 3.7's interpreter runs the same kernels.
OLD_INTERPRETER_ERROR = "only 0-dimensional arrays can be converted to Python scalars"


def _triton_before(rep: dict, version: tuple[int, int]) -> bool:
    major, minor = (int(part) for part in rep["meta"]["triton"].split(".")[:2])
    return (major, minor) < version


# --- targeted checks ------------------------------------------------------------------------


@pytest.mark.parametrize("name", params("bools", [n for n in MODELS if EXPECTED[n].bools]))
def test_bool_arguments_reach_the_interpreter(runs: CliRuns, name: str) -> None:
    """triformer's softmax passes `is_causal=False`: Triton 3.6 and 3.7's interpreter rejected the
    bool and the whole capture failed (exit 4); compile-only mode now passes it as int1, as Triton
    3.8 does, and says so in a note. With Triton 3.8 there is nothing to say."""
    rep = report(runs, name)
    notes = [d["message"] for d in rep["diagnostics"] if d["source"] == "interpreter" and d["severity"] == "note"]
    if not _triton_before(rep, (3, 8)):
        assert notes == []
        return
    (note,) = notes
    for kernel, params in EXPECTED[name].bools.items():
        assert f"{kernel}({', '.join(params)})" in note


@pytest.mark.parametrize("name", params("cpu_tensors", [n for n in MODELS if EXPECTED[n].cpu_tensors]))
def test_tensor_device_probes_are_named(runs: CliRuns, name: str, tmp_path: Path) -> None:
    """torchnorm launches its kernels only for CUDA tensors: compile-only mode's report has none, and
    says why (a warning naming the `x.is_cuda` probe with its file:line, and the no-kernels line)."""
    from tritoninspect.analyse.emulation import TENSOR_PROBE_NOTE

    rep, exp = report(runs, name), EXPECTED[name]
    (note,) = [d for d in rep["diagnostics"] if d["source"] == "compile-only" and d["message"].startswith(TENSOR_PROBE_NOTE)]
    assert note["severity"] == ("warning" if not rep["kernels"] else "note")
    for file, line, function, asked in exp.cpu_tensors.probes:
        code = (library_dir(exp.library) / file).read_text().splitlines()[line - 1]
        assert asked.split(".", 1)[1] in code, (file, line, code)  # "is_cuda" / "device.type"
        assert f"{exp.library}/{file}:{line} in {function} ({asked} ×" in note["message"], note["message"]
    if not rep["kernels"]:
        saved = tmp_path / "report.json"
        saved.write_text(json.dumps(rep))
        flat = " ".join(run_cli(["graph", str(saved)]).stdout.split())
        assert "no user-defined Triton kernels were seen: compile-only mode runs on CPU tensors" in flat
        file, line = exp.cpu_tensors.probes[0][:2]
        assert f"{exp.library}/{file}:{line} in" in flat


def test_a_library_that_allocates_on_cuda_fails_with_one_line() -> None:
    """triformer's TritonRMSNorm allocates its output on "cuda:0". Without a GPU, compile-only mode
    aborted the process (SIGABRT in torch's C++: no report, no error line); now it is the report's
    failure and one line naming the library's line. tests/reallib/_triformer_rms_norm.py."""
    reason = missing("triformer")
    if reason is not None:
        pytest.skip(reason)
    if gpu_here() or os.environ.get(SAVED_RUNS):
        pytest.skip("a GPU is here: compile-only mode does not refuse its CUDA tensors (gpu mode runs the library)")
    proc = run_cli(["graph", "tests/reallib/_triformer_rms_norm.py:Net", "--json", *CPU], timeout=600)
    assert proc.returncode == 4, explain(proc)
    failure = json.loads(proc.stdout)["failure"]
    source = library_dir("triformer") / "rms_norm.py"
    line = line_of(source, 'Y = torch.empty((n_rows, n_cols), dtype=X.dtype, device="cuda:0")')
    assert (failure["stage"], failure["exc_type"]) == ("dynamo", "NoCudaDevice"), failure
    assert Path(failure["torch_frame"].split(":")[0]).resolve() == source.resolve()
    assert failure["torch_frame"].endswith(f":{line} in forward")
    assert f"compile-only mode cannot create CUDA tensors: triformer/rms_norm.py:{line} in forward" in failure["message"]
    (error,) = [x for x in proc.stderr.splitlines() if x.strip()]
    assert error.startswith("error: the model failed while Dynamo traced") and "cannot create CUDA tensors" in error


@pytest.mark.parametrize("name", params("compiled_launch_args", ["liger_rms_norm"]))
def test_compiled_launch_fails_like_the_eager_launch(runs: CliRuns, name: str) -> None:
    """Inductor's launch of Liger's RMSNorm (an int stride specialised to 1, a float cast with
    `eps.to(tl.float32)`, libdevice's rsqrt) runs in the interpreter as the eager launch does. It once
    failed on misaligned arguments, then, like the eager launch, on the float's `.to()`; a compiled
    launch that fails must fail as the eager one would, so none may fail here."""
    rep = report(runs, name)
    assert [d["message"] for d in rep["diagnostics"] if d["source"] == "interpreter"] == []
    runtime = [o for k in rep["kernels"] for o in k["occurrences"] if o["stage"] == "runtime"]
    assert runtime and all(o["launches"] for o in runtime), runtime


@pytest.mark.parametrize("name", params("epilogue"))
def test_no_epilogue_fusion_claimed(runs: CliRuns, name: str) -> None:
    """torch 2.13 does not fuse epilogues into user kernels by default
    (epilogue_fusion_user_defined_triton_kernel is off): no launch may say `fused`."""
    rep = report(runs, name)
    fused = [(k["name"], n["compile_id"], n["part"]) for k in rep["kernels"] for o in k["occurrences"]
             for n in o.get("neighbourhood") or [] if n["epilogue_fusion"] == "fused"]
    assert fused == []


@pytest.mark.parametrize("name", params("no_fallback", ["fla_mean_pooling"]))
def test_no_mutation_fallback_in_the_recompile(runs: CliRuns, name: str) -> None:
    """The second compile (after the first ran its kernels in the interpreter) still analyses the
    kernels' stores: no fallback, only the written pointer cloned."""
    rep = report(runs, name)
    for kernel in rep["kernels"]:
        for o in occurrences(kernel, "aot_forward", "aot_backward", "aot_inference", "post_grad"):
            assert o["mutation_analysis_fallback"] is None, (kernel["name"], o["compile_id"], o["mutation_analysis_fallback"])
            assert len(o["tensors_to_clone"]) == 1, (kernel["name"], o["compile_id"], o["tensors_to_clone"])


@pytest.mark.parametrize("name", MODELS)
def test_gpu_mode(runs: CliRuns, name: str) -> None:
    """On the GPU (scripts/gpu-reallib on the H200, or any machine with CUDA): the same kernels,
    entries, ops and breaks as the docstring says, no break marked as following a device probe,
    and no compile-only diagnostics (no interpreter, no emulated queries)."""
    skip_unless_available(name)
    if not os.environ.get(SAVED_RUNS) and not gpu_here():
        pytest.skip("no GPU here: gpu mode runs on the GPU machine (scripts/gpu-reallib)")
    proc = runs.get(f"gpu {name}")
    rep = json_report(proc)
    assert (rep["meta"]["mode"], rep["meta"]["target"]) == ("gpu", f"tests/reallib/{name}.py:Net")
    check_kernels(rep, EXPECTED[name])
    check_breaks(rep, EXPECTED[name], name)
    assert [b for b in rep["graph_breaks"] if b.get("device_probe")] == []
    assert [d for d in rep["diagnostics"] if d["severity"] != "note" or d["source"] in ("interpreter", "compile-only")] == []


#: Stored gpu-mode reports of these models from the GPU machine (tests/fixtures/README.md).
STORED_GPU = REPO / "tests" / "fixtures" / "gpu-reallib" / "gpu"


@pytest.mark.parametrize("name", MODELS)
def test_agrees_with_the_stored_gpu_report(runs: CliRuns, name: str) -> None:
    """Compile-only mode here says what the H200 said in gpu mode about every device-independent
    fact (tools/agreement.py), but for COMPILE_ONLY_LIMITATIONS. Graph code and op counts are compared
    only when the torch versions match (the stored reports are torch 2.11's; FX prints other node
    numbers and `x = None` trailers in 2.13); kernels, occurrences, breaks, recompiles and opaque ops
    always. Where a device probe answered for the CPU here (breaks marked `device_probe`), the traced
    code took another path: that model's agreement is the GPU machine's (tests/test_agreement.py),
    where the probe answers True."""
    from tools.agree import load_report
    from tools.agreement import compare
    from tritoninspect.model.report import Report

    rep = report(runs, name)
    if any(b.get("device_probe") for b in rep["graph_breaks"]):
        pytest.skip("breaks after a device probe answered for the CPU: the traced code differs from the GPU's by "
                    "design here; agreement for this model is checked on the GPU machine's reports")
    if name in AWAITING_GPU_REPORTS:
        pytest.skip(f"no stored gpu-mode report of {name} yet: scripts/gpu-reallib on the GPU machine, its gpu/ "
                    "and cpu/ reports stored in tests/fixtures/gpu-reallib/ (AWAITING_GPU_REPORTS)")
    stored = load_report(STORED_GPU / f"{name}.json")
    result = compare(stored, Report.from_dict(rep))
    same_torch = stored.meta.torch.split("+")[0] == rep["meta"]["torch"].split("+")[0]
    unexplained = [d for d in result.unexplained
                   if same_torch or not (d.path.startswith("graphs[") and d.path.endswith((".code", ".op_count")))]
    assert result.compared >= 30
    assert unexplained == [], "\n".join(d.describe() for d in unexplained)


def test_resources_in_a_cold_cache(runs: CliRuns) -> None:
    """--resources compiles the library kernel for sm_90 with an empty TRITON_CACHE_DIR."""
    skip_unless_available(RESOURCES)
    rep = json_report(runs.get(f"{RESOURCES} --resources"))
    assert [d for d in rep["diagnostics"] if d["source"] == "resources"] == []
    for kernel in rep["kernels"]:
        (res,) = kernel["resources"]
        assert (res["target"], res["source"]) == ("sm_90", "compiled for sm_90"), res
        assert res["registers"] and res["registers"] > 0 and res["spills"] == 0, res


def test_rope_writes_q_and_k_in_place(runs: CliRuns) -> None:
    """Liger's RoPE rotates q and k in place: every AOT node clones both, forward and backward."""
    kernel = kernels_by_name(report(runs, "liger_rope"))["_triton_rope"]
    aot = occurrences(kernel, "aot_forward", "aot_backward")
    assert {o["stage"] for o in aot} == {"aot_forward", "aot_backward"}
    for o in aot:
        assert o["tensors_to_clone"] == ["q_ptr", "k_ptr"], o
    passes = sorted(o["constexprs"]["BACKWARD_PASS"] for o in occurrences(kernel, "dynamo"))
    assert passes == [False, True]


def test_docstrings_name_the_kernels() -> None:
    """Each model's docstring names every kernel it expects (keeps docstring and EXPECTED together)."""
    for name, exp in EXPECTED.items():
        doc = ast.get_docstring(ast.parse(model_path(name).read_text())) or ""
        for kname in exp.kernels:
            assert f"``{kname}``" in doc, (name, kname)
