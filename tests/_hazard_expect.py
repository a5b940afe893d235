"""What each hazard sample's report should say (issue 24), and running a sample eagerly and compiled.

Shared by the compile-only end-to-end tests (tests/test_hazards_e2e.py) and the GPU proof
(tests/gpu/test_gpu_hazards.py). Expectations come from the samples' docstrings and sources
(kernel, parameter and line names read from the source), never from a saved report.
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from _expect import REPO, kernel_def, kernel_first_line

SAMPLES = REPO / "samples"
#: Each sample's model and the models following its finding's action.
MODELS = {
    "hazard_autotune_hooks": ("Net", "NoPruneNet", "SingleConfigNet"),
    "hazard_fp64_scalar": ("Net", "CastNet"),
    "hazard_aliasing": ("Net", "OnePointerNet"),
    "hazard_view_clone": ("Net", "BaseOffsetNet"),
    "hazard_clone_cost": ("Net", "FreshNet"),
}


def findings(report: dict[str, Any], rule: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["rule"] == rule]


def finding(report: dict[str, Any], rule: str) -> dict[str, Any]:
    (found,) = findings(report, rule)
    return found


def errors(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["severity"] == "error"]


def evidence(f: dict[str, Any]) -> str:
    return "\n".join(e["text"] for e in f["evidence"])


# --- each sample's report -------------------------------------------------------------------------


def check_autotune_hooks(report: dict[str, Any], model: str) -> None:
    f = finding(report, "autotune_hooks")
    src = SAMPLES / "hazard_autotune_hooks.py"
    kernel = {"Net": "scale_sum_kernel", "NoPruneNet": "scale_sum_unpruned_kernel",
              "SingleConfigNet": "scale_sum_single_kernel"}[model]
    assert f["kernel"] == kernel and f["evidence"][0]["line"] == kernel_first_line(src, kernel)
    if model == "Net":
        assert f["severity"] == "error", f
        assert "reset_to_zero and restore_value do not reach the compiled launch" in f["summary"]
        assert "a new Autotuner Dynamo built: 3 configs, reset_to_zero=[], restore_value=[]" in evidence(f)
    elif model == "NoPruneNet":
        assert f["severity"] == "note" and "reset_to_zero kept; restore_value kept" in f["summary"], f
        assert "the user's Autotuner: 3 configs, reset_to_zero=['sum_ptr'], restore_value=['x_ptr']" in evidence(f)
    else:
        assert f["severity"] == "note" and "harmless here: it launches a single config" in f["summary"], f
    assert not errors(report) or model == "Net"


def check_fp64_scalar(report: dict[str, Any], model: str) -> None:
    f = finding(report, "fp64_scalar_math")
    src = SAMPLES / "hazard_fp64_scalar.py"
    assert "'gate': 'fp64'" in evidence(f) and "eager Triton types gate as fp32" in evidence(f)
    if model == "Net":
        assert f["severity"] == "warning" and f["kernel"] == "gated_scale_kernel", f
        (use,) = [e for e in f["evidence"] if e["kind"] == "kernel source"]
        fn = kernel_def(src, "gated_scale_kernel")
        lines = src.read_text().splitlines()
        assert lines[use["line"] - 1].strip() == "y = x * tl.sigmoid(x * gate)" and fn.lineno < use["line"] <= fn.end_lineno
    else:
        assert f["severity"] == "note" and "casts it before use" in f["summary"], f
    assert errors(report) == []


def check_aliasing(report: dict[str, Any], model: str) -> None:
    if model == "Net":
        f = finding(report, "aliased_args_split")
        assert f["severity"] == "error" and "one tensor as scaled_ptr and shifted_ptr" in f["summary"], f
        assert "the compiled launch passed scaled_ptr in storage s0, shifted_ptr in storage s1" in evidence(f)
    else:
        assert findings(report, "aliased_args_split") == [] and errors(report) == []


def check_view_clone(report: dict[str, Any], model: str) -> bool:
    """Whether the overread error was found (torch decides; the caller compares with the values)."""
    if model == "Net":
        found = findings(report, "view_clone_overread")
        notes = findings(report, "view_args")
        assert len(found) + len(notes) == 1, report["findings"]
        return bool(found)
    assert findings(report, "view_clone_overread") == findings(report, "view_args") == [] and errors(report) == []
    return False


def check_clone_cost(report: dict[str, Any], model: str) -> None:
    if model == "FreshNet":
        # The action: the kernel writes a fresh tensor nothing else reads; no copy remains for either kernel.
        costs = findings(report, "clone_cost")
        assert {f["kernel"] for f in costs} == {"add_one_into_kernel", "add_one_kernel"}, costs
        assert all(f["severity"] == "note" and "costs no copies in 0/0" in f["summary"] for f in costs), costs
        assert errors(report) == []
        return
    (f,) = [x for x in findings(report, "clone_cost") if x["kernel"] == "add_one_kernel"]
    assert f["severity"] == "warning" and f["compile_ids"] == ["0/0"], f
    # x[256:] of a 1024-float input: the copy spans the input from its start, 4096 bytes.
    assert "4.0 KB of copies per call in 0/0 (x_ptr: a view of a graph input" in f["summary"], f
    # add_one_kernel loads x_ptr: it needs an output of its own (FreshNet's add_one_into_kernel), never a fresh
    # tensor in x_ptr's place.
    assert "an output pointer apart from the one it reads" in f["action"] and "empty_like" not in f["action"], f
    (timing,) = [e for e in f["evidence"] if e["text"].startswith("mutation analysis ran")]
    runs = int(timing["text"].split(" ran ")[1].split()[0])
    assert runs >= 2  # at least once per launch: two launches


CHECKS = {
    "hazard_autotune_hooks": check_autotune_hooks, "hazard_fp64_scalar": check_fp64_scalar,
    "hazard_aliasing": check_aliasing, "hazard_view_clone": check_view_clone, "hazard_clone_cost": check_clone_cost,
}


# --- running a sample -----------------------------------------------------------------------------


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"hazard_sample_{name}", SAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def inputs(module: ModuleType, device: str, seed: int = 0, scale: int = 1) -> tuple[Any, ...]:
    """The sample's example inputs on `device` (views kept: each call builds them afresh)."""
    import torch

    torch.manual_seed(seed)
    made = module.example_inputs()
    if scale > 1:
        made = tuple(t.repeat(scale) if t.dim() == 1 else t for t in made)
    return tuple(t.to(device) for t in made)


def outputs(result: Any) -> tuple[Any, ...]:
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def max_diff(a: tuple[Any, ...], b: tuple[Any, ...]) -> float:
    """Largest |a - b| over the outputs (NaN where only one side is NaN counts as infinity)."""
    import torch

    worst = 0.0
    for x, y in zip(a, b):
        x, y = x.float(), y.float()
        nan = torch.isnan(x) ^ torch.isnan(y)
        if bool(nan.any()):
            return float("inf")
        d = (x - y).abs()
        d = d[~torch.isnan(d)]
        worst = max(worst, float(d.max()) if d.numel() else 0.0)
    return worst


def timed(fn: Any, *args: Any, reps: int = 50) -> float:
    """Milliseconds per call of `fn(*args)` on the GPU: `reps` calls back to back between two CUDA
    events, after warming up, so the launch overhead of each call hides behind the previous kernel."""
    import torch

    for _ in range(5):
        fn(*args)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn(*args)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / reps


def record_figure(key: str, value: Any) -> None:
    """Append a measured figure to $TRITONINSPECT_HAZARD_FIGURES (JSON lines), when set."""
    path = os.environ.get("TRITONINSPECT_HAZARD_FIGURES")
    print(f"FIGURE {key}: {value}")
    if path:
        with Path(path).open("a", encoding="utf-8") as out:
            out.write(json.dumps({"key": key, "value": value, "time": time.time()}) + "\n")
