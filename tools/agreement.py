"""Agreement between two reports of one model: the GPU run and compile-only mode.

A compile-only report is worth trusting where it says the same as the GPU run
about everything that does not depend on the device: the graphs of each compile
id (op counts, and FX code with the device blanked), graph breaks and the user
lines they happen at, recompiles, each kernel's entry kinds and occurrences
(grids, scalar and constexpr arguments, tensors_to_clone, mutation-analysis
fallbacks, launches in the output code and at run time), opaque ops, and, when
both reports have them for the same target, kernel resources.
`device_independent` turns a report into a flat {field path: value} dict of
exactly those facts; `compare` lines two of them up. A difference is a bug in
compile-only mode, or one of the `KNOWN_DIFFERENCES` below, each with its
reason and evidence.

Left out, because they depend on the device: `meta` (mode, device, versions),
the output code (Inductor writes Triton kernels on a GPU and C++ around
interpreted kernels on CPU: only its presence is compared), diagnostics, and
the addresses, absolute paths and `# File:` comments inside texts. Also left out:
the device-guard nodes Dynamo records for a `torch.cuda.device(...)` context
(`torch._C._cuda_exchangeDevice` / `_cuda_maybeExchangeDevice`), which libraries
enter for CUDA tensors only (fla's `input_guard`, Liger's `device_context`: on the
CPU tensors of compile-only mode they enter nothing or `torch.cpu.device`); a graph
made of nothing else exists on the GPU only, and is left out with its compile's
other graphs.

A maintainer tool, not installed with the package: `python -m tools.agree GPU_DIR CPU_DIR`
(tools/agree.py) compares two folders of reports (or two files).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tools.limitations import COMPILE_ONLY_LIMITATIONS, Limitation
from tritoninspect.model.report import STAGES, Kernel, Occurrence, Report

__all__ = ["COMPILE_ONLY_LIMITATIONS", "KNOWN_DIFFERENCES", "MISSING", "Comparison", "Difference", "KnownDifference",
           "Limitation", "compare", "device_independent", "graph_code"]

#: Stands for a field one report has and the other lacks.
MISSING = "<missing>"

#: Stages tritoninspect began to record after some reports still compared were written
#: (the stored GPU reports predate `post_grad_final`): compared only when both reports
#: have graphs of the stage, and said so when one has none.
LATER_STAGES = ("post_grad_final",)


@dataclass(frozen=True)
class KnownDifference:
    """A difference that comes from the versions of a package, not from compile-only mode.

    It applies when one report's `package` version starts with one of
    `versions` and the other's with the other, and the field path matches
    `path`, where `*` stands for any text without a "]" (brackets are literal):
    `kernels[*].occurrences[*].grid`. With `target` (a model file, `samples/nested_region.py`) it applies to
    that model's reports only: a path as wide as `graphs[*].code` must not hide another model's difference.
    """

    package: str  # "torch" | "triton"
    versions: tuple[str, str]
    path: str
    reason: str
    target: str = ""

    def applies(self, path: str, version_a: str, version_b: str, target: str = "") -> bool:
        a, b = self.versions
        pair = (version_a.startswith(a) and version_b.startswith(b)) or (
            version_a.startswith(b) and version_b.startswith(a)
        )
        if self.target and not target.split(":")[0].endswith(self.target):
            return False
        pattern = re.escape(self.path).replace(r"\*", r"[^\]]*")
        return pair and re.fullmatch(pattern, path) is not None


#: Differences between torch or Triton versions, each with the reason and where it shows.
#: The stored GPU reports (torch 2.11, tests/fixtures/gpu/, gpu-reallib/) and compile-only
#: reports on torch 2.13 agree on every other compared field; add an entry only with evidence
#: (the torch source line or PR, or the stored reports that show it), never to silence a
#: difference nobody explained.
_FLOAT_TO = (
    "torch 2.11's mutation analysis (its TTIR of the kernel, built from the HOP's arguments) fails to compile "
    "Liger-Kernel 0.8.5's RMSNorm kernels at `eps = eps.to(X_row_dtype)` / `offset.to(tl.float32)` "
    "(liger_kernel/ops/rms_norm.py:58 and :154: `.to()` on a float argument; 'CompilationError: at 58:14' / "
    "'at 41:24' in tests/fixtures/gpu-reallib/, in gpu mode and in compile-only mode alike) and falls back to "
    "'every input mutated' (more tensors_to_clone); torch 2.13's does not fall back (its analysis compiles the "
    "float argument as a runtime fp32), nor does torch 2.14's (compile-only mode, torch 2.14.1, triton 3.8.0: the "
    "same fields as 2.13, no fallback). A torch difference, not compile-only mode's; the PR not located."
)

_REGION_PER_CALL = (
    "torch 2.11 traces a torch.compiler.nested_compile_region once per call (samples/nested_region.py calls its "
    "region twice: Dynamo's subgraph_0 and subgraph_1, AOT's repeated_subgraph0 and repeated_subgraph1, the kernel "
    "in both); torch 2.13 traces it once and calls subgraph_0 twice. Seen in the H200's reports of the sample on "
    "2.11, in gpu mode and in compile-only mode alike (scripts/gpu-tests: the two agree), and in compile-only mode "
    "here on 2.13 and 2.14; tests/gpu/test_gpu_samples.py expects it by version (issue 22)."
)

_ONE_DEFINITION_PER_LAUNCH = (
    "Which definition of a user kernel each of its launches uses, as each report's own output code says: "
    "the stored torch 2.11 GPU report of samples/inplace.py defines add_inplace_kernel_0 once and launches it "
    "twice (64 and 32 elements); on torch 2.13 Inductor defines add_inplace_kernel_0 and add_inplace_kernel_1, "
    "one per launch (torch/_inductor/codegen/wrapper.py `define_user_defined_triton_kernel` keys a definition "
    "on the launch's inductor_meta, which holds its precomputed grids: 4 and 2 blocks here). Each report names, "
    "for each graph node, the definition its own launch uses (analyse/kernels.py `_definition_of`)."
)

_BIND_ERROR_RAISED = (
    "triformer's SoftmaxFunction has classmethod forward/backward taking (self, ctx, ...), which Dynamo fails to "
    "bind when it inlines the Function's forward. torch 2.11-2.13 break the graph there ('failed to bind arguments "
    "when attempting to inline', gb7312): the model's frame compiles around the call (compiles 0/0 and 3/0, each "
    "with its output code). torch 2.14 raises the binding failure as the TypeError eager would "
    "(https://github.com/pytorch/pytorch/pull/190797, exc.raise_type_error in symbolic_convert.py "
    "build_inline_tracer); nothing catches it, so Dynamo skips the model's frame ('Observed exception', "
    "frame_skipped) and only the Function's forward compiles. Seen here in compile-only mode, torch 2.14.1."
)

_COND_AS_SWITCH = (
    "Which of a torch.cond's two branch kernels Inductor defines first: torch 2.11-2.13 generate the true branch, "
    "then the false one (wrapper.py codegen_conditional), so samples/cond_kernel.py's true branch launches "
    "scale_kernel_0; torch 2.14 lowers cond as an ir.Switch over the branches reordered [false_fn, true_fn] "
    "(torch/_inductor/lowering.py `cond`, https://github.com/pytorch/pytorch/pull/188976), so the false branch's "
    "definition comes first and the true branch launches scale_kernel_1. The same launches under other names: each "
    "graph node names the definition its own branch uses, and the run-time launch is keyed by that name."
)

_MUL_BY_ONE_REMOVED = (
    "samples/hazard_autotune_hooks.py copies its input with `x = x * 1.0` before the kernel writes it. torch 2.14's "
    "Inductor joint-graph pass removes a multiplication by a scalar 1 (torch/_inductor/fx_passes/joint_graph.py "
    "`remove_no_ops`: `isScalarValue(e) and e == 1`, https://github.com/pytorch/pytorch/pull/166552; 2.11-2.13 "
    "removed only a multiplication by a tensor of ones), so the AOT and post-grad graphs lack the `mul` and pass "
    "the graph input to the kernel, and the final graph copies it instead (as_strided, clone: op count 3 -> 5). "
    "The kernel's occurrences (tensors_to_clone, grids, launches) still agree."
)

KNOWN_DIFFERENCES: tuple[KnownDifference, ...] = (
    KnownDifference("torch", ("2.11", "2.13"), "kernels[add_inplace_kernel].occurrences[*].inductor_name",
                    _ONE_DEFINITION_PER_LAUNCH, target="samples/inplace.py"),
    *(KnownDifference("torch", ("2.11", later), f"kernels[{kernel}].occurrences[*].{field}", _FLOAT_TO)
      for later in ("2.13", "2.14") for kernel in ("_rms_norm_forward_kernel", "_rms_norm_backward_kernel")
      for field in ("mutation_analysis_fallback", "tensors_to_clone")),
    *(KnownDifference("torch", ("2.11", later), path, _REGION_PER_CALL, target="samples/nested_region.py")
      for later in ("2.13", "2.14") for path in ("graphs[*].code", "graphs[*].subgraphs",
                   *(f"kernels[scale_kernel].occurrences[*].{field}" for field in (
                       "args", "entry", "grid", "in_output_code", "inductor_name", "mutation_analysis_fallback",
                       "tensors_to_clone")))),
    *(KnownDifference("torch", ("2.11", "2.14"), f"kernels[scale_kernel].occurrences[{where}].{field}",
                      _COND_AS_SWITCH, target="samples/cond_kernel.py")
      for where, fields in (("*", ("inductor_name",)),
                            ("0/0 runtime scale_kernel_*", ("entry", "inductor_name", "launches")))
      for field in fields),
    *(KnownDifference("torch", ("2.11", "2.14"), f"graphs[0/0 {stage} inference].{field}", _MUL_BY_ONE_REMOVED,
                      target="samples/hazard_autotune_hooks.py")
      for stage in ("aot_inference", "post_grad", "post_grad_final") for field in ("code", "op_count")),
    *(KnownDifference("torch", ("2.11", "2.14"), path, _BIND_ERROR_RAISED, target="tests/reallib/triformer_softmax.py")
      for path in ("graph_breaks[*].reason", "graph_breaks[*].frame_skipped", "graphs[0/0 output_code *].present",
                   "graphs[3/0 output_code *].present")),
)


@dataclass(frozen=True)
class Difference:
    """One field on which two reports disagree."""

    path: str
    a: Any
    b: Any
    #: The reason, when a `KnownDifference` explains it; None for a real disagreement.
    explained: str | None = None

    def describe(self) -> str:
        a, b = self.a, self.b
        where = ""
        if isinstance(a, str) and isinstance(b, str) and "\n" in a + b:
            # Code: show the first line that differs, not the first 120 characters.
            lines_a, lines_b = a.splitlines(), b.splitlines()
            n = next((i for i, (x, y) in enumerate(zip(lines_a, lines_b)) if x != y), min(len(lines_a), len(lines_b)))
            where = f" (line {n + 1})"
            a = lines_a[n].strip() if n < len(lines_a) else MISSING
            b = lines_b[n].strip() if n < len(lines_b) else MISSING
        text = f"{self.path}{where}: {_short(a)} != {_short(b)}"
        return f"{text}  (known: {self.explained})" if self.explained else text


@dataclass(frozen=True)
class Comparison:
    """The outcome of `compare`: how many fields were compared and which differ."""

    compared: int
    differences: tuple[Difference, ...] = ()
    #: What was left out of this comparison, and why (e.g. a stage one report predates).
    notes: tuple[str, ...] = ()

    @property
    def unexplained(self) -> tuple[Difference, ...]:
        return tuple(d for d in self.differences if d.explained is None)

    def summary(self) -> str:
        known = len(self.differences) - len(self.unexplained)
        tail = f" ({known} explained: version differences or documented compile-only limitations)" if known else ""
        return f"{self.compared} fields compared, {len(self.differences)} differ{tail}"


# --- the device-independent view -------------------------------------------------------


def device_independent(report: Report) -> dict[str, Any]:
    """Every device-independent fact of `report` as {field path: JSON-able value}."""
    paths = _Paths.of(report)
    facts: dict[str, Any] = {}
    facts.update(_graphs(report, paths))
    facts.update(_breaks(report, paths))
    facts.update({f"recompiles[{r.compile_id}].reason": guard_text(r.reason, paths) for r in report.recompiles})
    for kernel in report.kernels:
        facts.update(_kernel(kernel, paths))
    for op in report.opaque_ops:
        facts[f"opaque_ops[{op.compile_id} {op.stage} {op.node}]"] = {"op": op.op, "kernels": sorted(op.kernels)}
    unattributed = sorted({f.compile_id for f in report.mutation_fallbacks_unattributed})
    facts["mutation_fallbacks_unattributed.compile_ids"] = unattributed
    return facts


def _graphs(report: Report, paths: _Paths) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    guard_only = {g.compile_id for g in report.graphs if g.stage == "dynamo" and g.op_count
                  and g.op_count == device_guards(g.code)}
    graphs = [g for g in report.graphs if g.compile_id not in guard_only]
    for label, graph in _labelled((f"{g.compile_id} {g.stage} {g.part}".rstrip(), g) for g in graphs):
        if graph.stage == "output_code":
            # Triton kernels on a GPU, C++ around interpreted kernels on CPU: only its presence compares.
            facts[f"graphs[{label}].present"] = True
            continue
        facts[f"graphs[{label}].op_count"] = graph.op_count - device_guards(graph.code)
        facts[f"graphs[{label}].code"] = graph_code(graph.code, paths)
        if graph.subgraphs:
            facts[f"graphs[{label}].subgraphs"] = list(graph.subgraphs)
    return facts


# A failed guard's source comment: `# <statement>  # <file>:<line> in <function>`, the file
# cut at the front to fit a column whose width differs between torch versions.
_GUARD_LOCATION = re.compile(r"#\s*\S*?([\w.-]+\.py):(\d+) in ")
# Where in torch a symbolic guard came from, e.g. `(_dynamo/variables/tensor.py:1951 in
# evaluate_expr)`: a fact about torch's source, not the model, and its line moves every release.
_TORCH_LOCATION = re.compile(r" \((?:_\w+|torch)/[\w/]+\.py:\d+ in \w+\)")


def guard_text(reason: str, paths: _Paths) -> str:
    """A recompile reason without what names the machine or torch's own source lines:
    the guard's location keeps the file name, line and function; padding collapses."""
    text = _TORCH_LOCATION.sub("", paths.text(reason))
    text = _GUARD_LOCATION.sub(lambda m: f"# {m[1]}:{m[2]} in ", text)
    return re.sub(r" {2,}", "  ", text)


_DEVICE = re.compile(r"device\(type='(?:cuda|cpu)'(?:, index=\d+)?\)")
#: A device-guard node of a `torch.cuda.device(...)` context, as FX prints it (torch 2.11-2.14).
_DEVICE_GUARD = re.compile(r"^\s*_cuda_(?:maybe_)?exchange_device(?:_\d+)? = torch\._C\._cuda_(?:maybeE|e)xchangeDevice\(.*$",
                           re.M)
#: FX's comment over a group of nodes without a user stack (the groups a graph's code is made of
#: open with a comment and are separated by a blank line).
_NO_STACK = re.compile(r"^\s*# No stacktrace found for following nodes$")


def device_guards(code: str) -> int:
    """How many device-guard nodes (`torch._C._cuda_exchangeDevice`, `_cuda_maybeExchangeDevice`) the
    graph itself has: those in the body of its first `forward`, not in its subgraphs' (nested
    deeper), as `op_count` counts the graph's own nodes."""
    forward = re.search(r"^(?P<indent>[ \t]*)def forward\(", code, re.M)
    body = (forward["indent"] if forward else "") + "    "
    return sum(1 for m in _DEVICE_GUARD.finditer(code)
                if m.group(0)[: len(m.group(0)) - len(m.group(0).lstrip())] == body)
#: Where installed packages live: site-packages, dist-packages, or the `pip install --target`
#: directory scripts/gpu-tests and scripts/gpu-reallib install the wheels into on the GPU machine.
_INSTALLED = re.compile(r"(^|/)(?:(?:site|dist)-packages|tritoninspect-site)/")
#: `# File: ...`, or with activation checkpointing's prefix: `# ac_graph_id: 2 - PREFER_RECOMPUTE File: ...`.
#: torch 2.14 prefixes a backward node's source comment with "Backward of forward node: " (torch/fx/graph.py);
#: left out, as a version's text.
_SOURCE_COMMENT = re.compile(
    r"^(?P<indent>\s*)# (?P<pre>ac_graph_id: [^\n]*? )?(?:Backward of forward node: )?File: (?P<file>.+?):"
    r"(?P<line>\d+) in (?P<rest>.*)$", re.M)


def graph_code(code: str, paths: _Paths) -> str:
    """FX graph code without what names the machine: the device an op allocates on
    (`device(type='cuda', index=0)` / `device(type='cpu')`) is blanked; `# File:`
    comments keep the user's lines (relative path) and drop library ones, whose
    paths and line numbers name the installation, not the graph."""

    def source(match: re.Match[str]) -> str:
        rel = paths.rel(match["file"])
        # Not under the checkout (torch, triton, ...), or an installed package inside it
        # (a `.venv/` in the repo, as the README's commands make).
        if rel == match["file"] or _INSTALLED.search(match["file"]):
            return "\x00"
        return f"{match['indent']}# {match['pre'] or ''}File: {rel}:{match['line']} in {match['rest']}"

    kept = _SOURCE_COMMENT.sub(source, _DEVICE.sub("device(…)", without_device_guards(code)))
    kept = _LAUNCH_KWARGS.sub("", kept)
    return "\n".join(_one_comment_a_source(line for line in kept.split("\n") if line != "\x00"))


def _one_comment_a_source(lines: Iterable[str]) -> Iterator[str]:
    """`lines` without blank lines and without a source comment that repeats the last one: torch 2.14 starts
    a new group of nodes, after a blank line, where only the comment's "Backward of forward node: " prefix
    changes, so the same `# File:` comment comes again (torch/fx/graph.py); 2.11-2.13 print it once."""
    last = None
    for line in lines:
        if not line.strip():
            continue
        if line.lstrip().startswith("# ") and "File: " in line:
            if line.strip() == last:
                continue
            last = line.strip()
        yield line


#: torch 2.14's triton_kernel_wrapper nodes name the arguments the launch gave as keywords
#: (`launch_kwargs = ('BLOCK',)`, only when there are some; torch/_higher_order_ops/triton_kernel_wrap.py);
#: torch 2.11-2.13 print no such argument. A version's text, the same in gpu and compile-only mode.
_LAUNCH_KWARGS = re.compile(r", launch_kwargs = \([^)]*\)")


def without_device_guards(code: str) -> str:
    """`code` without its device-guard nodes; a group of nodes made of nothing else goes
    with its comment and the blank line before it, as if it had never been there."""
    lines, out, i = code.split("\n"), [], 0
    while i < len(lines):
        if not _NO_STACK.match(lines[i]):
            if not _DEVICE_GUARD.match(lines[i]):
                out.append(lines[i])
            i += 1
            continue
        end = i + 1
        while end < len(lines) and lines[end].strip() and not lines[end].lstrip().startswith(("#", "return ")):
            end += 1
        body = [line for line in lines[i + 1 : end] if not _DEVICE_GUARD.match(line)]
        if body or end == i + 1:
            out.extend([lines[i], *body])
        elif out and not out[-1].strip():
            out.pop()
        i = end
    return "\n".join(out)


def _breaks(report: Report, paths: _Paths) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    for i, b in enumerate(report.graph_breaks):
        where = f"graph_breaks[{i}]"
        facts[f"{where}.compile_id"] = b.compile_id
        facts[f"{where}.line"] = f"{paths.rel(b.file)}:{b.line}"
        facts[f"{where}.user_stack"] = [paths.frame(f) for f in b.user_stack]
        facts[f"{where}.frame_skipped"] = b.frame_skipped
        # The first line names the kind of break; the rest is advice whose wording moves between releases.
        facts[f"{where}.reason"] = paths.text(_first_line(b.reason))
    return facts


def _kernel(kernel: Kernel, paths: _Paths) -> dict[str, Any]:
    where = f"kernels[{kernel.name}]"
    facts: dict[str, Any] = {
        f"{where}.id": kernel.id,
        f"{where}.source": f"{paths.rel(kernel.file)}:{kernel.line}",
        f"{where}.decorators": list(kernel.decorators),
        f"{where}.constexpr_params": list(kernel.constexpr_params),
        f"{where}.autotune_configs": [dict(c) for c in kernel.autotune_configs],
        f"{where}.autotune_key": list(kernel.autotune_key),
        f"{where}.heuristics": list(kernel.heuristics),
        f"{where}.entries": list(kernel.entries),
        f"{where}.missing_from_output_code": list(kernel.missing_from_output_code),
    }
    for label, occ in _labelled(_occurrences(kernel)):
        for name, value in _occurrence_facts(occ).items():
            facts[f"{where}.occurrences[{label}].{name}"] = value
    for res in kernel.resources:
        label = f"{res.target} {_config_label(res.config)}"
        for name in ("registers", "shared", "spills", "num_warps", "num_stages"):
            facts[f"{where}.resources[{label}].{name}"] = getattr(res, name)
    return facts


def _occurrences(kernel: Kernel) -> list[tuple[str, Occurrence]]:
    """(label, occurrence) in a fixed order; the label names the place, not the values."""
    occurrences = _merged_runtime(kernel.occurrences)
    parts = _parts(occurrences)
    items = []
    for occ, part in zip(occurrences, parts):
        place = occ.node if occ.stage not in ("output_code", "runtime") else occ.inductor_name or occ.custom_op
        sub = f"{occ.subgraph}." if occ.subgraph and occ.stage not in ("output_code", "runtime") else ""
        label = " ".join(x for x in (occ.compile_id or "-", occ.stage, part, f"{sub}{place or ''}") if x)
        items.append((label, occ))
    return sorted(items, key=lambda item: (_stage_index(item[1].stage), item[0]))


def _merged_runtime(occurrences: Sequence[Occurrence]) -> list[Occurrence]:
    """Run-time launches of one kernel copy in one compile as one occurrence, their counts added.
    Since schema 5 they come per output-code part, function and line (a checkpointed kernel's
    recompute apart from its gradient launch); stored reports before it hold one, and a GPU's
    output code has other line numbers than compile-only mode's."""
    merged: dict[tuple[Any, ...], Occurrence] = {}
    others = []
    for occ in occurrences:
        if occ.stage != "runtime":
            others.append(occ)
            continue
        key = (occ.compile_id, occ.entry, occ.inductor_name, occ.custom_op)
        plain = replace(occ, part=None, placement=None, function=None, line=None)
        if key in merged:
            plain = replace(merged[key], launches=(merged[key].launches or 0) + (occ.launches or 0))
        merged[key] = plain
    return [*others, *merged.values()]


def _occurrence_facts(occ: Occurrence) -> dict[str, Any]:
    """The occurrence's facts that apply to its stage (None ones left out, so
    the count of compared fields counts findings, not blanks)."""
    args = {**(occ.constexprs or {}), **(occ.scalars or {})}
    facts = {
        "entry": occ.entry,
        "custom_op": occ.custom_op,
        "grid": [list(g) for g in occ.grid] if occ.grid is not None else None,
        # constexprs and other scalars together: which is which follows from the
        # kernel's constexpr_params (compared above); reports written before the
        # split (commit 70398c4) held both in `constexprs`.
        "args": args or None,
        "tensors_to_clone": list(occ.tensors_to_clone) if occ.tensors_to_clone is not None else None,
        "in_output_code": occ.in_output_code,
        "inductor_name": occ.inductor_name,
        "launches": occ.launches,
    }
    if occ.stage not in ("output_code", "runtime"):
        # The cause is an exception message; whether the analysis fell back is the finding.
        facts["mutation_analysis_fallback"] = occ.mutation_analysis_fallback is not None
    return {name: value for name, value in facts.items() if value is not None}


def _parts(occurrences: Sequence[Occurrence]) -> list[str]:
    """forward / backward / inference of each occurrence, also for reports written
    before `Occurrence.part` existed (commit 70398c4): the output-code part was
    then in `subgraph`, an AOT stage names its part, and a compile's post-grad
    graphs follow its AOT graphs in the same order."""
    parts: list[str] = []
    aot_order: dict[str, list[str]] = {}
    post_grad_seen: Counter[str] = Counter()
    for occ in occurrences:
        part = occ.part
        if not part and occ.stage == "output_code":
            part = occ.subgraph
        elif not part and occ.stage.startswith("aot_"):
            part = occ.stage.removeprefix("aot_")
        elif not part and occ.stage == "post_grad":
            order = aot_order.get(occ.compile_id or "", [])
            seen = post_grad_seen[occ.compile_id or ""]
            part = order[seen] if seen < len(order) else ""
        if occ.stage.startswith("aot_"):
            aot_order.setdefault(occ.compile_id or "", []).append(part or "")
        if occ.stage == "post_grad":
            post_grad_seen[occ.compile_id or ""] += 1
        parts.append(part or "")
    return parts


def _labelled(items: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Make labels unique: a repeated label gets #2, #3, ... in order."""
    seen: Counter[str] = Counter()
    result = []
    for label, item in items:
        seen[label] += 1
        result.append((label if seen[label] == 1 else f"{label} #{seen[label]}", item))
    return result


def _stage_index(stage: str) -> int:
    return STAGES.index(stage) if stage in STAGES else len(STAGES)


def _config_label(config: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in config.items()) or "default"


class _Paths:
    """Makes paths and texts comparable across machines: paths relative to the
    directory the target was given from, memory addresses blanked."""

    _ADDRESS = re.compile(r"0x[0-9a-fA-F]+")

    def __init__(self, root: str | None) -> None:
        self.root = root

    @classmethod
    def of(cls, report: Report) -> _Paths:
        target = report.meta.target.rsplit(":", 1)[0]
        files = [k.file for k in report.kernels] + [b.file for b in report.graph_breaks]
        suffix = "/" + target.lstrip("./")
        for file in files:
            if file and file.endswith(suffix) and not target.startswith("/"):
                return cls(file[: -len(suffix)])
        return cls(str(Path(target).parent) if target.startswith("/") else None)

    def rel(self, path: str | None) -> str | None:
        """`path` relative to the checkout; an installed package's file from the package on
        (`liger_kernel/ops/swiglu.py`), wherever the package was installed."""
        installed = _INSTALLED.search(path or "")
        if path and installed:
            return path[installed.end() :]
        if path and self.root and path.startswith(self.root + "/"):
            return path[len(self.root) + 1 :]
        return path

    def frame(self, frame: str) -> str:
        location, sep, func = frame.rpartition(" in ")
        file, colon, line = location.rpartition(":")
        return f"{self.rel(file)}{colon}{line}{sep}{func}" if sep and colon else frame

    def text(self, text: str) -> str:
        text = self._ADDRESS.sub("0x…", text)
        return text.replace(self.root + "/", "") if self.root else text


# --- comparing ---------------------------------------------------------------------


def compare(a: Report, b: Report, known: Sequence[KnownDifference] = KNOWN_DIFFERENCES) -> Comparison:
    """Compare the device-independent facts of two reports of the same model.

    Resources are compared only where both reports have them for the same
    target. Each difference a `known` entry explains (by the two reports'
    torch or Triton versions) carries its reason.
    """
    fa, fb = device_independent(a), device_independent(b)
    _drop_unpaired_resources(fa, fb)
    notes = _drop_later_stages(a, b, fa, fb)
    paths = sorted(set(fa) | set(fb))
    differences = []
    for path in paths:
        va, vb = fa.get(path, MISSING), fb.get(path, MISSING)
        if va != vb:
            differences.append(Difference(path, va, vb, _explain(path, a, b, known, (va, vb))))
    return Comparison(len(paths), tuple(differences), notes)


def _drop_later_stages(a: Report, b: Report, fa: dict[str, Any], fb: dict[str, Any]) -> tuple[str, ...]:
    notes = []
    for stage in LATER_STAGES:
        has = ({g.stage for g in a.graphs} >= {stage}, {g.stage for g in b.graphs} >= {stage})
        if has[0] == has[1]:
            continue
        for facts in (fa, fb):
            for path in [p for p in facts if f" {stage} " in p or f" {stage}]" in p]:
                del facts[path]
        notes.append(f"stage {stage} only in the {'first' if has[0] else 'second'} report "
                     "(the other was written before tritoninspect recorded it): not compared")
    return tuple(notes)


def _drop_unpaired_resources(fa: dict[str, Any], fb: dict[str, Any]) -> None:
    """Resources are opt-in (--resources): compare them only for a kernel and target both have."""
    def owners(facts: dict[str, Any]) -> set[str]:
        return {p.split("].resources[", 1)[0] + "|" + p.split("].resources[", 1)[1].split(" ", 1)[0]
                for p in facts if "].resources[" in p}

    shared = owners(fa) & owners(fb)
    for facts in (fa, fb):
        for path in [p for p in facts if "].resources[" in p]:
            head, tail = path.split("].resources[", 1)
            if f"{head}|{tail.split(' ', 1)[0]}" not in shared:
                del facts[path]


def _explain(path: str, a: Report, b: Report, known: Sequence[KnownDifference],
             values: tuple[Any, Any] = (None, None)) -> str | None:
    for limitation in COMPILE_ONLY_LIMITATIONS:
        if a.meta.mode != b.meta.mode and limitation.applies(path, a.meta.target, *values):
            return limitation.reason
    for entry in known:
        va, vb = getattr(a.meta, entry.package, ""), getattr(b.meta, entry.package, "")
        if va.split("+")[0] != vb.split("+")[0] and entry.applies(path, va, vb, b.meta.target):
            return entry.reason
    return None


def _first_line(text: str) -> str:
    stripped = text.strip()
    return stripped.splitlines()[0] if stripped else ""


def _short(value: Any, width: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"
