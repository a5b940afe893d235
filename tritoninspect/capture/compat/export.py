"""torch.export and AOTInductor: exporting, the graph signature, shape constraints, packages.

Public entry points (`torch.export.export`, `torch._inductor.aoti_compile_and_package`,
`aoti_load_package`) with private corners: the signature's spec classes, the range
constraints' value ranges, the package's file layout. Read in torch 2.13; the same
names exist in 2.11 (torch/export/graph_signature.py, torch/_inductor/__init__.py).
"""

from __future__ import annotations

import inspect
import os
import zipfile
from typing import Any

import torch


def default_strict() -> bool:
    """What `torch.export.export` does without `strict=`: its own default, read from its
    signature (False in torch 2.11-2.14; the PR that made non-strict the default was not
    found), so the report names torch's own default even if it moves."""
    param = inspect.signature(torch.export.export).parameters.get("strict")
    default = getattr(param, "default", inspect.Parameter.empty)
    return bool(default) if isinstance(default, bool) else False


def export(module: Any, args: tuple[Any, ...], *, strict: bool, dynamic_shapes: Any = None,
           kwargs: dict[str, Any] | None = None) -> Any:
    """`torch.export.export(module, args, kwargs, strict=..., dynamic_shapes=...)` (public API)."""
    return torch.export.export(module, tuple(args), kwargs or None, strict=strict, dynamic_shapes=dynamic_shapes)


def dim_auto() -> Any:
    """`torch.export.Dim.AUTO`: dynamic where the program allows, specialised where it does not
    (no error); present in torch 2.11-2.14, PR not found."""
    return torch.export.Dim.AUTO


def graph_code(ep: Any) -> str:
    """The exported program's graph as Python source (`ExportedProgram.graph_module.code`)."""
    return ep.graph_module.code.strip("\n") + "\n"


def signature(ep: Any) -> list[tuple[str, str, str, str | None]]:
    """(direction, kind, graph name, target) per input and output spec.

    `ExportGraphSignature.input_specs` / `output_specs` with `InputKind` / `OutputKind`
    enums and `arg.name` (TensorArgument, SymIntArgument, ...), torch 2.1-2.14
    (torch/export/graph_signature.py). `target` is the parameter/buffer FQN, or for a
    mutation output the buffer or input it writes back to.
    """
    sig = ep.graph_signature
    rows = [("input", spec.kind.name, _arg_name(spec.arg), spec.target) for spec in sig.input_specs]
    rows += [("output", spec.kind.name, _arg_name(spec.arg), spec.target) for spec in sig.output_specs]
    return rows


def _arg_name(arg: Any) -> str:
    name = getattr(arg, "name", None)
    return str(name) if name is not None else str(getattr(arg, "value", arg))


def placeholder_values(ep: Any) -> dict[str, Any]:
    """Graph input name -> its `meta["val"]` (a FakeTensor with symbolic sizes, a SymInt, ...)."""
    return {n.name: n.meta.get("val") for n in ep.graph.nodes if n.op == "placeholder"}


def decomposed(ep: Any) -> Any:
    """`ExportedProgram.run_decompositions()`: the functional program (core ATen), what
    AOTInductor lowers. A user kernel's in-place writes become a functional HOP with
    `tensors_to_clone` and mutation outputs in the signature (public API, torch 2.11-2.14)."""
    return ep.run_decompositions()


def output_tensors(ep: Any) -> dict[str, str]:
    """Output name -> "float32[s6, 48]" for the graph's tensor outputs (the output node's args,
    each an FX node with `meta["val"]`, torch 2.11-2.14)."""
    from tritoninspect.capture.compat.hops import tensor_info

    found: dict[str, str] = {}
    for node in ep.graph.nodes:
        if node.op == "output":
            outs = node.args[0] if isinstance(node.args[0], (tuple, list)) else (node.args[0],)
            for arg in outs:
                info = tensor_info(arg) if isinstance(arg, torch.fx.Node) else None
                if info is not None:
                    found[arg.name] = info[0]
    return found


def range_constraints(ep: Any) -> dict[str, tuple[str, str]]:
    """Symbol -> (lower, upper) of `ExportedProgram.range_constraints` (sympy symbol ->
    ValueRanges with `.lower` / `.upper`, torch 2.1-2.14; `int_oo` prints as "int_oo")."""
    return {str(sym): (str(vr.lower), str(vr.upper)) for sym, vr in ep.range_constraints.items()}


def graph_nodes(ep: Any) -> list[torch.fx.Node]:
    """Every node of the exported graph and its submodules (e.g. a `cond` branch)."""
    return [n for mod in ep.graph_module.modules() if isinstance(mod, torch.fx.GraphModule) for n in mod.graph.nodes]


def aoti_compile(ep: Any, package_path: str, *, options: dict[str, Any] | None = None) -> str:
    """`torch._inductor.aoti_compile_and_package(ep, package_path=..., inductor_configs=...)`:
    the AOTInductor package (a .pt2 zip) built. Keyword-only `package_path` and
    `inductor_configs` in torch 2.11-2.14 (read in 2.13's signature; PR not found)."""
    return torch._inductor.aoti_compile_and_package(ep, package_path=package_path, inductor_configs=options or {})


def aoti_load(path: str) -> Any:
    """`torch._inductor.aoti_load_package(path)`: the package's callable (an AOTICompiledModel)."""
    return torch._inductor.aoti_load_package(path)


def package_files(path: str) -> list[tuple[str, int]]:
    """(name inside the package, bytes) per file of a .pt2 package (a zip archive, the
    `<name>/data/aotinductor/<model>/` layout of torch 2.6+)."""
    with zipfile.ZipFile(path) as archive:
        return [(info.filename, info.file_size) for info in archive.infolist() if not info.is_dir()]


def package_text(path: str, suffixes: tuple[str, ...] = (".wrapper.cpp", ".wrapper.json")) -> dict[str, str]:
    """Base name -> text of the package's files ending in `suffixes`: AOTInductor's generated C++
    wrapper (`<hash>.wrapper.cpp`, named so since torch 2.7) and its extern-node JSON (the
    custom ops the wrapper calls through the proxy executor)."""
    found: dict[str, str] = {}
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if name.endswith(suffixes):
                found[os.path.basename(name)] = archive.read(name).decode("utf-8", errors="replace")
    return found


def has_fake(op: str) -> bool | None:
    """Has the custom op `op` ("ns::name") a fake (meta) implementation? None for an op
    not made by `torch.library.custom_op`. `CustomOpDef._abstract_fn`, set by
    `register_fake` (triton_op registers its own body), private, torch 2.11-2.14; PR not found."""
    from torch._library.custom_ops import OPDEFS

    opdef = OPDEFS.get(op)
    return None if opdef is None else getattr(opdef, "_abstract_fn", None) is not None
