"""Finding 1: which of a `triton.autotune` kernel's hooks survive into the compiled launch.

Read from what torch kept, not from a table of versions: the user's own Autotuner
(`hazards.user_autotune`), the object Dynamo stored in its kernel side table for the launch, which
Inductor compiles (`hazards.side_table`), and the `user_autotune` metadata Inductor wrote into the
output code (`triton_meta` restore_value / reset_to_zero, its configs). A dropped reset_to_zero,
restore_value or hook on a kernel that writes memory is an error when Inductor benchmarks several
configs: the benchmark runs write the real buffers and nothing zeroes or restores them.
"""

from __future__ import annotations

from dataclasses import dataclass

from tritoninspect.analyse.hazards._common import (
    CompiledLaunch,
    compiled_launches,
    fell_back,
    joined,
    torch_evidence,
    torch_version,
    written,
)
from tritoninspect.model.hazard_records import AutotuneSettings, SideTableKernel
from tritoninspect.model.records import Capture, KernelRecord
from tritoninspect.model.report import Evidence, Finding

RULE = "autotune_hooks"

BASIS = ("Dynamo stores a new Autotuner for the launch when it prunes configs (prune_configs_by), folds "
         "@triton.heuristics into them or moves a launch option into a Config; it passes only configs, key=[] and "
         "prune_configs_by, so reset_to_zero and restore_value are lost. Inductor applies only the side-table "
         "kernel's reset_to_zero and restore_value (to its benchmark runs), calls no pre_hook or post_hook, "
         "benchmarks with its own timer on the launch's real arguments at the first run, and keeps the best "
         "config in its autotune cache (a later process that finds it there does not benchmark).")
CITE = ("torch/_higher_order_ops/triton_kernel_wrap.py (TritonHOPifier.call_triton_kernel, init_variable); "
        "torch/_inductor/ir.py (UserDefinedTritonKernel.get_kernel_and_metadata); "
        "torch/_inductor/runtime/triton_heuristics.py (user_autotune, CachingAutotuner.benchmark_all_configs); "
        "triton/runtime/autotuner.py (Autotuner._bench, run)")
VERSIONS = ("seen on torch 2.11 (H200: compiled differs from eager by 0.093) and 2.13 (CPU: hooks absent from the "
            "side table and from Inductor's metadata); no release known to keep them")
KEPT_VERSIONS = ("this compile kept them (read from Dynamo's side table and Inductor's metadata): torch loses them only "
                 "when Dynamo rebuilds the Autotuner")


@dataclass(frozen=True)
class Hook:
    """One autotune setting and what became of it under torch.compile."""

    name: str
    #: "kept", "dropped", "once" (applied once at trace time), "unused".
    fate: str
    detail: str
    #: Dropping it can change what the kernel leaves in memory.
    stateful: bool = False


def autotune_hooks(capture: Capture) -> list[Finding]:
    """One finding per autotuned kernel and compile that launched it under Inductor (or Dynamo)."""
    findings = []
    for kid, user in capture.hazards.user_autotune.items():
        record = capture.kernels.get(kid)
        if record is None:
            continue
        launches = compiled_launches(capture, record)
        for side in (s for s in capture.hazards.side_table if s.kernel_id == kid):
            compiled = next((c for c in launches if c.compile_id == side.compile_id), None)
            findings.append(_finding(capture, record, user, side, compiled))
    return findings


def hooks(user: AutotuneSettings, side: SideTableKernel, compiled: CompiledLaunch | None) -> list[Hook]:
    """What became of each setting the user gave (only those given)."""
    kept = side.autotune
    out: list[Hook] = []
    for name in ("reset_to_zero", "restore_value"):
        wanted = getattr(user, name)
        if not wanted:
            continue
        there = getattr(compiled.meta, name) if compiled is not None else getattr(kept, name, ())
        where = "Inductor's triton_meta" if compiled is not None else "the side-table Autotuner"
        missing = [n for n in wanted if n not in there]
        fate = "dropped" if missing else "kept"
        out.append(Hook(name, fate, f"{name}={list(wanted)}: {'not in' if missing else 'in'} {where}", stateful=True))
    for name, given in (("pre_hook", user.pre_hook), ("post_hook", user.post_hook),
                        ("Config.pre_hook", user.config_pre_hooks)):
        if given:
            out.append(Hook(name, "dropped", f"{name}: Inductor's launcher calls no hook", stateful=True))
    if user.early_config_prune or user.perf_model:
        after = kept.configs if kept is not None else 1
        what = ", ".join(x for x in (f"early_config_prune={user.early_config_prune}" if user.early_config_prune else "",
                                     f"perf_model={user.perf_model}, top_k={user.top_k}" if user.perf_model else "") if x)
        out.append(Hook("prune_configs_by", "once",
                        f"{what}: run once by Dynamo at trace time, {after} of {user.configs} configs kept for every "
                        "call of this compile"))
    if user.do_bench:
        out.append(Hook("do_bench", "dropped", f"do_bench={user.do_bench}: Inductor benchmarks with its own timer"))
    for name, value in (("warmup", user.warmup), ("rep", user.rep)):
        if value is not None:
            out.append(Hook(name, "dropped", f"{name}={value}: Inductor benchmarks with its own settings"))
    if user.use_cuda_graph:
        out.append(Hook("use_cuda_graph", "dropped", "use_cuda_graph=True: Inductor benchmarks with its own timer"))
    if user.key:
        out.append(Hook("key", "unused", f"key={list(user.key)}: Inductor tunes once per compile (a new shape "
                                         "recompiles instead of retuning)"))
    return out


def _finding(capture: Capture, record: KernelRecord, user: AutotuneSettings, side: SideTableKernel,
             compiled: CompiledLaunch | None) -> Finding:
    fates = hooks(user, side, compiled)
    configs = _benchmarked(side, compiled)
    writes = written(capture, record.id, side.compile_id)
    how_written = ("stored to by the kernel's source (mutation analysis failed, so torch's tensors_to_clone lists "
                   "every tensor argument):" if fell_back(capture, record.id, side.compile_id)
                   else "written by the kernel (tensors_to_clone):")
    dropped = [h for h in fates if h.fate == "dropped" and h.stateful]
    error = bool(dropped) and configs > 1 and bool(writes)
    evidence = [
        Evidence("decorator", _decorator_text(user), file=record.file, line=record.line),
        Evidence("graph node", _side_text(side), compile_id=side.compile_id, node=side.node),
        *([Evidence("output code", _compiled_text(compiled), compile_id=compiled.compile_id,
                    node=compiled.meta.inductor_name, line=compiled.meta.line)] if compiled is not None else []),
        *(Evidence("kernel parameter", f"{how_written} {name}", compile_id=side.compile_id, param=name)
          for name in writes),
        *(Evidence("decorator", f"{h.fate}: {h.detail}") for h in fates),
        torch_evidence(capture),
    ]
    names = joined(h.name for h in dropped)
    if error:
        keep = "keeps" if len(writes) == 1 else "keep"
        summary = (f"{record.name}'s autotune {names} {'does' if len(dropped) == 1 else 'do'} not reach the compiled "
                   f"launch: when Inductor tunes (a run with no autotune-cache entry for it) it benchmarks its {configs} "
                   f"configs on the real buffers, so {joined(writes)} {keep} what the benchmark runs wrote (eager Triton "
                   f"{_eager_does(dropped)} them).")
        action = _action(user, side)
        severity = "error"
    else:
        summary = f"{record.name} under torch.compile: " + "; ".join(f"{h.name} {h.fate}" for h in fates)
        if dropped:
            reason = "launches a single config (no benchmark runs)" if configs <= 1 else "writes no tensor"
            summary += f" (harmless here: it {reason})"
        summary += "."
        action, severity = "", "note"
    # A note on hooks this compile kept must not read "no release known to keep them" (a newcomer's model).
    versions = VERSIONS if dropped else KEPT_VERSIONS
    return Finding(
        rule=RULE, severity=severity, kernel=record.name, summary=summary, action=action,  # type: ignore[arg-type]
        evidence=tuple(evidence),
        basis=BASIS, cite=CITE, versions=versions, torch=torch_version(capture), compile_ids=(side.compile_id,),
    )


def _eager_does(dropped: list[Hook]) -> str:
    """What eager Triton does with the dropped hooks' tensors between benchmark runs."""
    verbs = {"reset_to_zero": "zeroes", "restore_value": "restores"}
    said = [verbs[h.name] for h in dropped if h.name in verbs]
    return " and ".join(dict.fromkeys(said)) if said else "resets"


def _benchmarked(side: SideTableKernel, compiled: CompiledLaunch | None) -> int:
    """How many configs the compiled launch benchmarks (Inductor's `configs=[]` for a plain kernel: 1)."""
    if compiled is not None and compiled.meta.configs is not None:
        return max(compiled.meta.configs, 1)
    return side.autotune.configs if side.autotune is not None else 1


def _action(user: AutotuneSettings, side: SideTableKernel) -> str:
    base = ("give the kernel a single triton.Config under torch.compile (Inductor then never benchmarks it), or "
            "launch it outside the compiled region (torch.compiler.disable)")
    if not side.users_object and (user.early_config_prune or user.perf_model):
        return ("Prune the config list yourself instead of prune_configs_by (Dynamo then keeps your Autotuner and "
                f"Inductor applies reset_to_zero and restore_value), or {base}.")
    return base[0].upper() + base[1:] + "."


def _decorator_text(user: AutotuneSettings) -> str:
    parts = [f"configs={user.configs}", f"key={list(user.key)}"]
    for name in ("reset_to_zero", "restore_value"):
        if getattr(user, name):
            parts.append(f"{name}={list(getattr(user, name))}")
    if user.early_config_prune or user.perf_model:
        parts.append("prune_configs_by=" + ", ".join(x for x in (user.early_config_prune, user.perf_model) if x))
    for name in ("pre_hook", "post_hook", "use_cuda_graph"):
        if getattr(user, name):
            parts.append(f"{name}=...")
    if user.do_bench:
        parts.append(f"do_bench={user.do_bench}")
    return f"@triton.autotune({', '.join(parts)})"


def _side_text(side: SideTableKernel) -> str:
    who = "the user's Autotuner" if side.users_object else "a new Autotuner Dynamo built"
    if side.autotune is None:
        return f"Dynamo's side table holds the bare @triton.jit function for this launch ({who})"
    kept = side.autotune
    folded = f", {joined(side.folded)} folded into its configs" if side.folded else ""
    return (f"Dynamo's side table holds {who}{folded}: {_configs(kept.configs)}, reset_to_zero={list(kept.reset_to_zero)}, "
            f"restore_value={list(kept.restore_value)}")


def _compiled_text(compiled: CompiledLaunch) -> str:
    meta = compiled.meta
    return (f"Inductor's user_autotune for {meta.inductor_name}: {_configs(max(meta.configs or 0, 1))}, triton_meta "
            f"reset_to_zero={list(meta.reset_to_zero)}, restore_value={list(meta.restore_value)}")


def _configs(n: int) -> str:
    return "1 config" if n == 1 else f"{n} configs"
