"""Each advice rule proved by applying it: the model before, the model with the advice applied, and what
must hold of each (tests/test_advice_proofs.py on CPU, tests/gpu/test_gpu_advice.py on a GPU).

A `Proof` names the rule, the target the rule must fire on (`before`), and the same model changed as its
advice says (`after`): after the change the rule is silent and the promised effect is in the new report
(the clone is gone, the break is gone, the kernel became visible), and the values stay right: the changed
model, compiled, gives what the original gives eagerly (outputs, and gradients where backward runs). A
negative proof has no `after` and checks what the rule must not say. Every target runs once, in a fresh
process, through tests/_advice_run.py (the CLI's capture, plus the eager and compiled values).
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from _zygote import cli_env, run as zygote_run
from tritoninspect.analyse.advice import advise
from tritoninspect.model.report import Advice, ClonedArg, Report, read_report

REPO = Path(__file__).resolve().parents[1]
ASSETS = "tests/assets/advice"


@dataclass(frozen=True)
class Run:
    """What one target gave: its report, and its values eager and compiled."""

    report: Report
    values: dict[str, Any]

    def advice(self, rule: str) -> list[Advice]:
        return [a for a in advise(self.report) if a.rule == rule]


Check = Callable[[Run], None]


@dataclass(frozen=True)
class Proof:
    """One rule applied: `before` must get the advice (`fires`), `after` (the advice applied) must show
    its effect (`effect`) and keep the values."""

    name: str
    rule: str
    before: str
    fires: Check
    after: str | None = None
    effect: Check | None = None
    #: The changed model must give the original's eager values (False: it computes more, by design).
    same_values: bool = True
    #: Values are compared in compile-only mode too (False: the interpreter cannot run the kernel).
    values_on_cpu: bool = True
    #: Distributions the models import (the proof is skipped without them).
    needs: tuple[str, ...] = ()
    #: Capture options of the `after` run, when the advice is an option (`--dynamic`), not a code change.
    after_options: tuple[str, ...] = ()
    targets: tuple[str, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        after = (" ".join((self.after, *self.after_options)),) if self.after else ()
        object.__setattr__(self, "targets", (self.before, *after))


# --- facts the checks read --------------------------------------------------------------------------


def still_cloned(report: Report, kernel: str) -> list[ClonedArg]:
    """The arguments of `kernel` re-inplacing left cloned, in any AOT graph."""
    k = report.kernel(kernel)
    assert k is not None, f"no kernel {kernel} in the report"
    return [a for o in k.occurrences if o.clones is not None for a in o.clones.arguments if a.cloned]


def one(found: list[Advice], rule: str) -> Advice:
    assert len(found) == 1, f"expected one {rule} finding, got {[a.finding for a in found]}"
    return found[0]


def no_repository_paths(a: Advice) -> None:
    """Advice never points at a file of this repository; its links go to documentation or the library."""
    text = f"{a.finding} {a.action}"
    assert "samples/" not in text and "tests/" not in text and "tritoninspect/" not in text, text


def silent(rule: str) -> Check:
    def check(run: Run) -> None:
        assert run.advice(rule) == [], [a.finding for a in run.advice(rule)]

    return check


def all_of(*checks: Check) -> Check:
    def check(run: Run) -> None:
        for c in checks:
            c(run)

    return check


# --- the proofs -------------------------------------------------------------------------------------


def skip_unless_merged(run: Run, kernel: str, params: tuple[str, ...]) -> None:
    """Skips the proof, saying so, where this torch's compile kept the equal allocations apart: the AOT
    graph passes `params` separate tensors (no argument shares one, none merged), so nothing is copied and
    the rule rightly says nothing; both are checked first. torch 2.14.1's AOTAutograd keeps the two
    torch.zeros apart; 2.11-2.13 merge them."""
    args = [a for k in run.report.kernels if k.name == kernel for o in k.occurrences
            if o.clones is not None and o.stage.startswith("aot_") for a in o.clones.arguments if a.arg in params]
    if not args or any(a.merged or a.shares_with for a in args):
        return
    assert still_cloned(run.report, kernel) == [], "arguments kept apart, yet cloned"
    assert run.advice("clone_merged_allocations") == [], "nothing merged, yet the rule fired"
    import torch

    pytest.skip(f"torch {torch.__version__} kept {', '.join(params)} apart in the AOT graph: no merged allocation "
                "for the advice to explain (and no copy, no advice: checked)")


def _merged_fires(run: Run) -> None:
    skip_unless_merged(run, "ln_bwd_kernel", ("DW", "DB"))
    a = one(run.advice("clone_merged_allocations"), "clone_merged_allocations")
    assert a.kernels == ("ln_bwd_kernel",) and "DW and DB" in a.finding
    assert "torch._functorch.config.cse = False" in a.action and "allocate one tensor for both" in a.action
    assert "Keep DB as torch.zeros" in a.action  # the atomics need the zeros
    assert all("empty_like" not in x.action for x in advise(run.report))
    assert run.advice("inplace_clones") == []


def _merged_write_only_fires(run: Run) -> None:
    skip_unless_merged(run, "write_and_add_kernel", ("out_ptr", "acc_ptr"))
    a = one(run.advice("clone_merged_allocations"), "clone_merged_allocations")
    assert a.kernels == ("write_and_add_kernel",) and "out_ptr and acc_ptr" in a.finding, a.finding
    assert "torch.empty (AOTAutograd never merges torch.empty)" in a.action
    assert "Keep acc_ptr as torch.zeros" in a.action  # it adds into it


def _no_write_and_add_clone(run: Run) -> None:
    assert still_cloned(run.report, "write_and_add_kernel") == []


def _no_bwd_clone(run: Run) -> None:
    assert still_cloned(run.report, "ln_bwd_kernel") == []


def _shared_fires(run: Run) -> None:
    a = one(run.advice("clone_shared_allocation"), "clone_shared_allocation")
    assert a.kernels == ("ln_bwd_kernel",) and "DW and DB" in a.finding and "views of one tensor" in a.finding
    assert run.advice("clone_merged_allocations") == []


def _input_view_fires(run: Run) -> None:
    a = one(run.advice("clone_input_view"), "clone_input_view")
    assert a.kernels == ("add_inplace_kernel",) and "x_ptr" in a.finding
    assert "input tensor itself instead of the view" in a.action


def _no_inplace_clone(run: Run) -> None:
    assert still_cloned(run.report, "add_inplace_kernel") == []
    assert all(not g.copies for g in run.report.graphs if g.stage == "output_code")


def _break_hint(run: Run) -> str:
    hints = [b.hint or "" for b in run.report.graph_breaks if b.gb_id == "GB0124" or "item()" in b.reason]
    assert hints, [b.headline for b in run.report.graph_breaks]
    return hints[0]


def _item_sizes_fires(run: Run) -> None:
    hint = _break_hint(run)
    assert "only feeds a kernel's grid or scalar arguments" in hint
    assert "Set torch._dynamo.config.capture_scalar_outputs = True" in hint


def _no_breaks(run: Run) -> None:
    assert run.report.graph_breaks == (), [b.headline for b in run.report.graph_breaks]


def _item_branch_fires(run: Run) -> None:
    hint = _break_hint(run)
    assert "decides a Python branch" in hint and "torch.where" in hint
    assert "Set torch._dynamo.config.capture_scalar_outputs" not in hint
    for a in advise(run.report):
        assert "Set torch._dynamo.config.capture_scalar_outputs" not in a.action, a.action


def _still_breaks_at_the_branch(run: Run) -> None:
    """The wrong advice, applied: the graph still breaks, now at the branch."""
    texts = [f"{b.headline} {b.reason}" for b in run.report.graph_breaks]
    assert any("Data-dependent branching" in t or "generic_jump" in t for t in texts), texts


def _user_custom_op_fires(run: Run) -> None:
    a = one(run.advice("custom_op_hides_kernel"), "custom_op_hides_kernel")
    assert a.library is None and "torch.library.triton_op" in a.action and "https://docs.pytorch.org" in a.action
    no_repository_paths(a)


def _visible(kernel: str) -> Check:
    def check(run: Run) -> None:
        k = run.report.kernel(kernel)
        assert k is not None and k.entries == ("triton_op",), k and k.entries
        assert any(o.stage == "output_code" and o.in_output_code for o in k.occurrences)
        assert kernel not in {n for op in run.report.opaque_ops for n in op.kernels}

    return check


def _library_custom_op_fires(run: Run) -> None:
    a = one(run.advice("custom_op_hides_kernel"), "custom_op_hides_kernel")
    assert a.library == "moe-ops" and len(a.kernels) == 4 and len(a.details) == 4
    assert "installed library code" in a.finding
    assert "wrap_triton" in a.action and "https://github.com/echogujy/moe_ops/issues" in a.action
    no_repository_paths(a)


def _three_left(run: Run) -> None:
    a = one(run.advice("custom_op_hides_kernel"), "custom_op_hides_kernel")
    assert "_unpermute_kernel" not in a.kernels and len(a.kernels) == 3


def _liger_user_op_fires(run: Run) -> None:
    found = run.advice("custom_op_hides_kernel")
    assert found and all(a.library is None and "torch.library.triton_op" in a.action for a in found)
    assert {lib.distribution for lib in run.report.libraries} >= {"liger_kernel"}


def _liger_visible(run: Run) -> None:
    for name in ("_geglu_tanh_forward_kernel", "_geglu_tanh_backward_kernel"):
        k = run.report.kernel(name)
        assert k is not None and k.entries == ("triton_op",), k and k.entries


def _eager_fires(run: Run) -> None:
    a = one(run.advice("eager_launches"), "eager_launches")
    assert a.kernels == ("gelu_kernel",) and "drop the torch.compiler.disable" in a.action


def _backward_after_break_fires(run: Run) -> None:
    a = one(run.advice("eager_launches"), "eager_launches")
    assert a.kernels == ("scale_kernel",) and a.action.startswith("Remove the graph break at "), a.action
    assert "in the backward of Triple" in a.finding


def _backward_compiled(run: Run) -> None:
    k = run.report.kernel("scale_kernel")
    assert k is not None and k.entries == ("hop",)
    assert run.report.graph_breaks == ()


def _traced(run: Run) -> None:
    k = run.report.kernel("gelu_kernel")
    assert k is not None and k.entries == ("hop",)
    assert run.report.graph_breaks == ()


def _missing_fires(run: Run) -> None:
    a = one(run.advice("kernel_missing"), "kernel_missing")
    assert a.kernels == ("double_kernel",) and "Use what the kernel writes" in a.action


def _launched(run: Run) -> None:
    k = run.report.kernel("double_kernel")
    assert k is not None and k.missing_from_output_code == ()
    assert any(o.stage == "output_code" and o.in_output_code for o in k.occurrences)


def _cut_fires(run: Run) -> None:
    a = one(run.advice("backward_cut"), "backward_cut")
    assert "scale_bias_kernel" in a.finding and "autograd.Function" in a.action
    no_repository_paths(a)


def _grads_reach(run: Run) -> None:
    meta = run.report.meta
    assert meta.backward and meta.backward_skipped_calls == 0 and meta.params_without_grad == ()
    assert {"lin.weight", "lin.bias", "bias"} <= set(run.values["compiled_grads"])


def _fallback_fires(run: Run) -> None:
    a = one(run.advice("mutation_fallback"), "mutation_fallback")
    assert "pure=True" in a.action and "no side effects" in a.action


def _no_fallback(run: Run) -> None:
    k = run.report.kernel("asm_copy_kernel")
    assert k is not None and all(o.mutation_analysis_fallback is None for o in k.occurrences)
    clones = [o.clones for o in k.occurrences if o.clones is not None]
    assert clones and all(c.before_reinplace == ("out_ptr",) for c in clones)


def _size_recompile_fires(run: Run) -> None:
    found = run.advice("recompiles")
    assert found and any("mark_dynamic" in a.action for a in found)


def _no_recompiles(run: Run) -> None:
    assert run.report.recompiles == ()


LN = f"{ASSETS}/ln_zeros_merged.py:Net"
PROOFS: tuple[Proof, ...] = (
    Proof("merged_allocations_cse", "clone_merged_allocations", LN, _merged_fires,
          f"{ASSETS}/ln_zeros_nocse.py:Net", all_of(_no_bwd_clone, silent("clone_merged_allocations"))),
    Proof("merged_allocations_one_buffer", "clone_merged_allocations", LN, _merged_fires,
          f"{ASSETS}/ln_one_buffer.py:Net", all_of(_no_bwd_clone, silent("clone_merged_allocations"))),
    Proof("merged_allocations_empty", "clone_merged_allocations", f"{ASSETS}/merged_write_only.py:Net",
          _merged_write_only_fires, f"{ASSETS}/merged_write_only_empty.py:Net",
          all_of(_no_write_and_add_clone, silent("clone_merged_allocations"))),
    Proof("shared_allocation", "clone_shared_allocation", f"{ASSETS}/ln_views.py:Net", _shared_fires,
          f"{ASSETS}/ln_one_buffer.py:Net", all_of(_no_bwd_clone, silent("clone_shared_allocation"))),
    Proof("input_view", "clone_input_view", "samples/inplace.py:Net", _input_view_fires,
          f"{ASSETS}/inplace_whole.py:Net", all_of(_no_inplace_clone, silent("clone_input_view"))),
    Proof("item_feeds_grid", "graph_breaks", "samples/break_item_grid.py:Net", _item_sizes_fires,
          f"{ASSETS}/item_grid_scalars.py:Net", _no_breaks),
    Proof("item_decides_branch", "graph_breaks", f"{ASSETS}/item_branch.py:Net", _item_branch_fires,
          f"{ASSETS}/item_branch_where.py:Net", _no_breaks),
    Proof("item_branch_flag_does_not_help", "graph_breaks", f"{ASSETS}/item_branch_scalars.py:Net",
          _still_breaks_at_the_branch),
    Proof("custom_op_user", "custom_op_hides_kernel", "samples/custom_op.py:Net", _user_custom_op_fires,
          "samples/triton_op.py:Net", all_of(_visible("add_kernel"), silent("custom_op_hides_kernel"))),
    Proof("custom_op_library", "custom_op_hides_kernel", f"{ASSETS}/moe_ops_layer.py:Net", _library_custom_op_fires,
          f"{ASSETS}/moe_ops_wrapped.py:Net", all_of(_visible("_unpermute_kernel"), _three_left),
          needs=("moe-ops",)),
    Proof("custom_op_user_op_library_kernel", "custom_op_hides_kernel", "tests/reallib/liger_custom_op.py:Net",
          _liger_user_op_fires, "tests/reallib/liger_triton_op.py:Net",
          all_of(_liger_visible, silent("custom_op_hides_kernel")), needs=("liger_kernel",),
          values_on_cpu=False),  # Triton's interpreter cannot run Liger's geglu kernels (the launch is skipped)
    Proof("eager_disabled", "eager_launches", "samples/break_disabled_dispatch.py:Net", _eager_fires,
          f"{ASSETS}/dispatch_traced.py:Net", all_of(_traced, silent("eager_launches"))),
    Proof("eager_backward_after_forward_break", "eager_launches", "tests/assets/backward_after_forward_break.py:Net",
          _backward_after_break_fires, f"{ASSETS}/backward_forward_unbroken.py:Net",
          all_of(_backward_compiled, silent("eager_launches"))),
    Proof("kernel_missing", "kernel_missing", f"{ASSETS}/kernel_unused.py:Net", _missing_fires,
          f"{ASSETS}/kernel_used.py:Net", all_of(_launched, silent("kernel_missing")), same_values=False),
    Proof("backward_cut", "backward_cut", "tests/assets/grad_cut_model.py:ParamModel", _cut_fires,
          f"{ASSETS}/grad_cut_function.py:ParamModel", all_of(_grads_reach, silent("backward_cut"))),
    Proof("mutation_fallback", "mutation_fallback", "samples/inline_asm.py:Net", _fallback_fires,
          f"{ASSETS}/inline_asm_pure.py:Net", all_of(_no_fallback, silent("mutation_fallback")),
          values_on_cpu=False),
    # The size action applied as compiling dynamic from the start (`--dynamic`, torch.compile(dynamic=True)).
    Proof("recompile_size", "recompiles", "samples/dynamic_shapes.py:Net", _size_recompile_fires,
          "samples/dynamic_shapes.py:Net", all_of(_no_recompiles, silent("recompiles")), after_options=("--dynamic",)),
)


def missing_needs(proof: Proof) -> list[str]:
    found = []
    for name in proof.needs:
        try:
            importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found.append(name)
    return found


# --- running the targets ----------------------------------------------------------------------------


class ProofRuns:
    """Every target of the selected proofs, run once each, `workers` at a time (a fresh process per
    target: tests/_advice_run.py); `get(target)` waits for one."""

    def __init__(self, proofs: Iterable[Proof], device: str, workers: int) -> None:
        self.device = device
        # TRITONINSPECT_ADVICE_RUNS=DIR keeps each target's run in DIR and reuses it when there (to rerun the
        # checks without compiling again; remove DIR after changing the capture or the models).
        kept = os.environ.get("TRITONINSPECT_ADVICE_RUNS")
        self._dir = None if kept else tempfile.TemporaryDirectory(prefix="advice-proofs-")
        self._root = Path(kept) / device if kept else Path(self._dir.name)  # type: ignore[union-attr]
        self._pool = ThreadPoolExecutor(max_workers=workers)
        targets = dict.fromkeys(t for p in proofs if not missing_needs(p) for t in p.targets)
        self._runs: dict[str, Future[Run]] = {t: self._pool.submit(self._run, t) for t in targets}

    def _run(self, target: str) -> Run:
        import torch

        out = self._root / target.replace("/", "_").replace(":", "_").replace(" ", "_")
        if (out / "values.pt").exists():
            return Run(read_report(out / "report.json"), torch.load(out / "values.pt", weights_only=False))
        model, *options = target.split(" ")
        proc = zygote_run([sys.executable, str(REPO / "tests" / "_advice_run.py"), model, str(out),
                           "--device", self.device, *options], cwd=REPO, env=cli_env(), timeout=1500)
        assert proc.returncode == 0, f"{target}: exit {proc.returncode}\n{proc.stderr[-4000:]}"
        return Run(read_report(out / "report.json"), torch.load(out / "values.pt", weights_only=False))

    def get(self, target: str) -> Run:
        return self._runs[target].result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self._dir is not None:
            self._dir.cleanup()


def check_proof(proof: Proof, runs: ProofRuns) -> None:
    """The rule fires on `before`; applied (`after`), it is silent, its effect shows, and the values hold."""
    import torch

    before = runs.get(proof.before)
    proof.fires(before)
    if proof.after is None:
        return
    after = runs.get(proof.targets[-1])
    assert proof.effect is not None
    proof.effect(after)
    if runs.device == "cpu" and not proof.values_on_cpu:
        return
    compare = torch.testing.assert_close
    compare(after.values["compiled"], after.values["eager"])
    for name, grad in after.values["eager_grads"].items():
        compare(after.values["compiled_grads"].get(name), grad, msg=lambda m: f"gradient of {name}: {m}")
    if proof.same_values:
        compare(after.values["compiled"], before.values["eager"])
        for name, grad in before.values["eager_grads"].items():
            compare(after.values["compiled_grads"].get(name), grad, msg=lambda m: f"gradient of {name}: {m}")
