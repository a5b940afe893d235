"""Compile user kernels with Triton for the active target: at compile-only launches, and per
autotune config for `--resources` (metadata, registers)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch
import triton
from triton.runtime.autotuner import Autotuner
from triton.runtime.jit import JITFunction

from tritoninspect.capture.compat.versions import is_triton_compilation_error
from tritoninspect.model.errors import CaptureError

# A kernel is compiled once per autotune config through a fresh copy of its
# JITFunction: `warmup()` binds and specialises the arguments exactly as a
# launch would (pointer alignment, ints divisible by 16), compiles for the
# active driver's target and launches nothing (triton/runtime/jit.py
# `KernelInterface.warmup` / `JITFunction.run`, same in triton 3.6-3.8). A copy,
# so its binder is made for the driver active now (the stub's `--target` in
# compile-only mode) and the user's kernel cache is left alone. The private
# pieces (`device_caches`, `create_binder`, `MockTensor.wrap_dtype`) are as in
# triton 3.6-3.8; PR not found.


def compile_kernel(jf: JITFunction, args: dict[str, Any], options: dict[str, Any]) -> Any:
    """Compile `jf` for the active target; `args` by parameter name (a torch.dtype
    stands for a tensor of that dtype: `MockTensor.wrap_dtype`)."""
    return _warmup(_fresh_copy(jf), args, options)


def _fresh_copy(jf: JITFunction, types: Mapping[str, str] | None = None) -> JITFunction:
    """A copy of `jf` with caches of its own; the parameters in `types` annotated with those Triton types,
    so its binder types them so (`create_function_from_signature` takes an annotated scalar's type from its
    annotation: `KernelParam.annotation_type`, triton 3.6-3.8). Inductor compiles a user kernel with the
    signature it wrote (`ASTSource(fn, triton_meta["signature"], ...)` in CachingAutotuner), where a Python
    float is `fp64`; Triton's own binder types one `fp32`."""
    import copy
    from collections import defaultdict

    from triton.runtime.jit import KernelParam

    fresh = copy.copy(jf)
    if types:
        fresh.params = [KernelParam(p.num, p._param.replace(annotation=types[p.name]), p.do_not_specialize,
                                    p.do_not_specialize_on_alignment) if p.name in types else p for p in jf.params]
    fresh.device_caches = defaultdict(fresh.create_binder)
    return fresh


def _warmup(fresh: JITFunction, args: dict[str, Any], options: dict[str, Any]) -> Any:
    compiled = fresh.warmup(*_positional(fresh, args), grid=(1,), **_options(fresh, options))
    if compiled is None:
        raise CaptureError(f"Triton returned no compiled kernel for {fresh.fn.__name__}")
    # An async compile returns a future (triton knobs.compilation.async_compile,
    # triton 3.6-3.8; PR not found).
    return compiled.result() if hasattr(compiled, "result") else compiled


def _positional(jf: JITFunction, args: dict[str, Any]) -> list[Any]:
    """The kernel's arguments in parameter order, as a launch passes them, so none can clash
    with warmup()'s own keywords (`grid`) or a launch option's; a parameter the launch left
    out takes its default (Triton's binder does the same). `warmup()` wraps a torch.dtype
    given positionally as a tensor of that dtype (`MockTensor.wrap_dtype`, triton 3.6-3.8)."""
    import inspect

    values = []
    for param in inspect.signature(jf.fn).parameters.values():
        if param.name in args:
            values.append(args[param.name])
        elif param.default is not inspect.Parameter.empty:
            values.append(param.default)
        else:
            break  # Triton's binder reports the missing argument
    return values


def _options(jf: JITFunction, options: dict[str, Any]) -> dict[str, Any]:
    """The launch options, less those named like a kernel parameter: Triton binds such a
    keyword to the parameter (triformer's `num_warps: tl.constexpr`; jit.py
    `create_function_from_signature`, triton 3.6-3.8), so the compile keeps its default option.
    Inductor also sets the option from its config (CachingAutotuner._create_compile_meta):
    the check compiles the kernel either way, the option only changes the warps it is built for."""
    params = set(jf.arg_names)
    return {k: v for k, v in options.items() if k not in params}


class LaunchCompiler:
    """Compile-only mode: compile each user kernel for real, for the stub's target, at its
    launches, as a GPU would before running it, so a kernel Triton cannot compile fails
    the capture instead of only running in the interpreter.

    One private copy of each JITFunction (see `compile_kernel`) keeps Triton's own
    in-memory cache, keyed by the launch's specialisation and options: a kernel compiles
    once per distinct specialisation. Triton's on-disk cache is the one compile-only mode
    keeps apart from real GPU runs (compat/caches.py): a binary found there was compiled
    from the same source, options and target by Triton before, and a failed compile is
    never cached, so a kernel that does not compile still fails every run.

    Only Triton's verdict on the kernel fails a launch (`is_kernel_compile_error`); any
    other exception on the way (an argument this CPU-side compile cannot bind, a bug of
    ours) goes to `on_problem(kernel, exc)` and the launch goes on in the interpreter.
    """

    def __init__(self, on_problem: Callable[[str, BaseException], None]) -> None:
        self._on_problem = on_problem
        self._copies: dict[tuple[int, tuple[tuple[str, str], ...]], tuple[JITFunction, JITFunction]] = {}

    def compile(self, jf: JITFunction, args: dict[str, Any], options: dict[str, Any],
                types: Mapping[str, str] | None = None) -> Any:
        """Compile `jf` with one launch's arguments by name (tensors as launched) and its
        launch options; `types`: scalar parameters typed as Inductor's signature types them
        (`inductor_scalar_types`). A kernel Triton cannot compile raises Triton's exception, with
        `compile_error_details` attached; None when something else went wrong."""
        key = (id(jf), tuple(sorted((types or {}).items())))
        try:
            jf, fresh = self._copies.setdefault(key, (jf, _fresh_copy(jf, types)))
        except Exception as exc:  # noqa: BLE001 - this Triton's KernelParam differs: compile as launched
            self._on_problem(jf.fn.__name__, exc)
            jf, fresh = self._copies.setdefault((id(jf), ()), (jf, _fresh_copy(jf)))
        try:
            return _warmup(fresh, args, options)
        except Exception as exc:
            if read_by_triton(exc):
                raise  # as from the launch on a GPU
            if not is_kernel_compile_error(exc):
                self._on_problem(jf.fn.__name__, exc)
                return None
            setattr(exc, _DETAILS_ATTR, _details(exc, jf))
            raise

    def close(self) -> None:
        self._copies.clear()


def inductor_scalar_types(signature: Mapping[str, str], args: Mapping[str, Any]) -> dict[str, str]:
    """The Python-float arguments Inductor's signature types `fp64` (torch passes a float scalar of the
    graph as a double: on a GPU the kernel compiles with it fp64, where an eager launch has it fp32): a
    kernel that casts it in a branch Triton cannot fold fails to compile there (`gate = gate.to(tl.float32)`
    under a runtime `if`: "then block redefines it as fp32[]")."""
    return {name: "fp64" for name, ty in signature.items() if ty == "fp64" and isinstance(args.get(name), float)}


def read_by_triton(exc: BaseException) -> bool:
    """`exc` came from Triton reading the kernel's source for its cache key, before any compile:
    its `DependenciesFinder` resolves each global and attribute the kernel uses, so
    `libdevice.rsqrtt(x)` raises AttributeError ("module ... has no attribute 'rsqrtt'") from
    the launch itself, on a GPU as here (triton/runtime/jit.py `DependenciesFinder.visit_Attribute`,
    `JITFunction.cache_key`, triton 3.6-3.8)."""
    from triton.runtime.jit import DependenciesFinder

    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and isinstance(tb.tb_frame.f_locals.get("self"), DependenciesFinder)


def is_kernel_compile_error(exc: BaseException) -> bool:
    """Triton refused the kernel: its front end (`CompilationError` and subclasses) or
    ptxas (`triton.runtime.errors.PTXASError`), the same classes in triton 3.6-3.8."""
    from triton.runtime.errors import PTXASError

    return is_triton_compilation_error(exc) or isinstance(exc, PTXASError)


@dataclass(frozen=True)
class CompileErrorDetails:
    """What a failed compile is about, in the user's terms."""

    #: The kernel being compiled.
    kernel: str
    #: Every CompilationError of the chain, the kernel's first (a nested @jit function's
    #: error follows the call site in the kernel), as Triton wrote it; ptxas' whole output.
    message: str
    #: "file:line in function" of each error location, the kernel's first.
    frames: tuple[str, ...]


_DETAILS_ATTR = "_tritoninspect_details"


def compile_error_details(exc: BaseException) -> CompileErrorDetails | None:
    """The details of a kernel compile error: as `LaunchCompiler` attached them, else what
    a CompilationError alone says (kernel name from its source, no file lines); None for
    any other exception."""
    details = getattr(exc, _DETAILS_ATTR, None)
    if details is not None or not is_triton_compilation_error(exc):
        return details
    errors = _compilation_errors(exc)
    return CompileErrorDetails(_def_name(errors[0].src) or "?", "\n".join(str(e) for e in errors), ())


#: How Inductor's compile workers report an exception: its formatted traceback as the message of the
#: SubprocException the parent raises (torch/_inductor/compile_worker/subproc_pool.py, torch 2.11-2.14), the
#: last line of which, for a kernel Triton refused, is `triton.compiler.errors.CompilationError: at 172:4: ...`.
_WORKER_COMPILE_ERROR = "triton.compiler.errors.CompilationError: "


def worker_compile_error(exc: BaseException) -> str | None:
    """The message of a Triton compile error raised in one of Inductor's compile worker processes (on a GPU
    Inductor compiles user kernels there: the error reaches the parent as text); None for anything else."""
    text = str(exc)
    at = text.rfind(_WORKER_COMPILE_ERROR)
    if at < 0 or "Traceback (most recent call last)" not in text[:at]:
        return None
    return text[at + len(_WORKER_COMPILE_ERROR):].strip() or None


def _details(exc: BaseException, jf: JITFunction) -> CompileErrorDetails:
    """The kernel and the file lines of the errors. CompilationError carries the function's
    source and the AST node (`src`, `node`, triton 3.6-3.8), its line relative to the
    `def`: the file line is the `def`'s line + node.lineno - 1 (code_generator.py
    `begin_line`); a nested error's function is found by name in its caller's globals."""
    errors = _compilation_errors(exc)
    frames = []
    fn: JITFunction | None = jf
    for i, error in enumerate(errors):
        if fn is None or _def_name(error.src) != fn.fn.__name__:
            break
        where = _error_line(fn, error)
        if where is not None:
            frames.append(where)
        fn = _callee(fn, errors[i + 1]) if i + 1 < len(errors) else None
    message = "\n".join(str(e) for e in errors) if errors else str(exc)
    return CompileErrorDetails(jf.fn.__name__, message, tuple(frames))


def _error_line(fn: JITFunction, error: Any) -> str | None:
    from tritoninspect.capture.compat.kernels import kernel_source

    file, first_line = kernel_source(fn)
    line = getattr(error.node, "lineno", None)
    if file is None or first_line is None or line is None:
        return None
    return f"{file}:{first_line + _def_offset(fn) + line - 1} in {fn.fn.__name__}"


def _compilation_errors(exc: BaseException) -> list[Any]:
    """`exc` and the CompilationErrors it was raised from, outermost first."""
    errors = []
    current: BaseException | None = exc
    while current is not None and is_triton_compilation_error(current) and current not in errors:
        errors.append(current)
        current = current.__cause__
    return errors


def _def_name(src: str | None) -> str | None:
    match = re.search(r"^def\s+(\w+)", src or "", re.MULTILINE)
    return match[1] if match else None


def _def_offset(jf: JITFunction) -> int:
    """Lines from where `inspect.getsourcelines` starts (the first decorator) to the `def`."""
    import inspect

    lines, _ = inspect.getsourcelines(jf.fn)
    return next((i for i, text in enumerate(lines) if text.lstrip().startswith("def ")), 0)


def _callee(caller: JITFunction, inner: Any) -> JITFunction | None:
    """The @jit function the next (inner) error is in, when the caller names it as a global."""
    value = caller.fn.__globals__.get(_def_name(inner.src) or "")
    return value if isinstance(value, JITFunction) else None


def compiled_metadata(compiled: Any) -> dict[str, Any]:
    """Shared memory (bytes), warps, stages and target of a CompiledKernel
    (`CompiledKernel.metadata`, a namedtuple of the backend's options; fields as
    in triton 3.6-3.8, PR not found)."""
    meta = compiled.metadata
    target = meta.target
    arch = getattr(target, "arch", None)
    return {
        "shared": getattr(meta, "shared", None),
        "num_warps": getattr(meta, "num_warps", None),
        "num_stages": getattr(meta, "num_stages", None),
        "target": f"sm_{arch}" if getattr(target, "backend", "") == "cuda" else str(arch),
    }


def loaded_kernel_usage(compiled: Any) -> tuple[int | None, int | None]:
    """(registers, spills) of a kernel loaded on the GPU: `_init_handles()` loads
    it and reads CU_FUNC_ATTRIBUTE_NUM_REGS and LOCAL_SIZE_BYTES / 4
    (triton/backends/nvidia/driver.c `loadBinary`, triton 3.6-3.8; PR not found)."""
    compiled._init_handles()
    return getattr(compiled, "n_regs", None), getattr(compiled, "n_spills", None)


_RES_USAGE_RE = re.compile(r"\bREG:(?P<reg>\d+)\b.*?\bLOCAL:(?P<local>\d+)\b")


def cubin_usage(compiled: Any) -> tuple[int | None, int | None]:
    """(registers, spills) of a compiled kernel that cannot be loaded here, from
    the cuobjdump bundled in the triton wheel (`knobs.nvidia.cuobjdump`,
    triton/backends/nvidia/bin): `cuobjdump -res-usage` prints
    `REG:30 STACK:0 SHARED:0 LOCAL:0 ...`. Spills as the driver counts them:
    local memory bytes / 4. `knobs.nvidia.cuobjdump`: triton 3.6-3.8 (the knobs
    module); PR not found."""
    import subprocess
    import tempfile

    cubin = compiled.asm.get("cubin")
    if cubin is None:
        return None, None
    tool = triton.knobs.nvidia.cuobjdump.path
    with tempfile.TemporaryDirectory(prefix="tritoninspect-") as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        out = subprocess.run([tool, "-res-usage", path], capture_output=True, text=True, check=True).stdout
    match = _RES_USAGE_RE.search(out)
    if match is None:
        raise CaptureError(f"cannot read cuobjdump -res-usage output: {out.strip()[:200]}")
    return int(match["reg"]), int(match["local"]) // 4


def launch_value(value: Any) -> Any:
    """A HOP argument as `compile_kernel` takes it: a tensor node -> its dtype, a
    symbolic int -> its hint (2 without one, as torch's generate_ttir does),
    plain values as they are."""
    example = value.meta.get("val", value.meta.get("example_value")) if isinstance(value, torch.fx.Node) else value
    if isinstance(example, torch.Tensor):
        return example.dtype
    if isinstance(example, torch.SymInt):
        # SymNode.has_hint() / .hint (torch/fx/experimental/sym_node.py, 2.11-2.14;
        # PR not found).
        node = example.node
        return int(node.hint) if node.has_hint() else 2
    return example


def config_dicts(kernel: Any) -> list[dict[str, Any]]:
    """Each autotune config of the kernel object a HOP launches (kwargs plus the
    launch options that are set), or one empty config for a plain JITFunction.
    Dynamo's synthesised Autotuner already holds the heuristics' values (§1).
    Config.all_kwargs(), triton 3.6-3.8."""
    if isinstance(kernel, Autotuner):
        return [{k: v for k, v in c.all_kwargs().items() if v is not None} for c in kernel.configs]
    return [{}]
