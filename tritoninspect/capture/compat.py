"""Every private torch / Triton name tritoninspect relies on, in one place.

Everything here tracks internals that move between releases. Rules:
- detect features, not version strings;
- each shim names the torch version or PR it tracks;
- an unknown layout raises `CaptureError` (or returns None where the caller
  turns that into a diagnostic), never a silent guess.

Supported: torch 2.11-2.14, triton 3.6-3.8 (see tests/test_compat.py).
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import sys
from collections.abc import Iterator
from types import CodeType, FrameType
from typing import Any

import torch
import triton
from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction

from tritoninspect import origin
from tritoninspect.errors import CaptureError

# --- versions ---------------------------------------------------------------


def torch_version() -> str:
    return torch.__version__


def triton_version() -> str:
    return triton.__version__


# --- the triton kernel higher-order ops -------------------------------------

# torch/_higher_order_ops/triton_kernel_wrap.py: the HOPs and their side table
# have kept these names from torch 2.3 to 2.14.
from torch._higher_order_ops import triton_kernel_wrap as _tkw  # noqa: E402

HOP_MUTATION = _tkw.triton_kernel_wrapper_mutation
HOP_FUNCTIONAL = _tkw.triton_kernel_wrapper_functional


def hop_form(node: torch.fx.Node) -> str | None:
    """'mutation' or 'functional' for a triton-kernel HOP node, else None."""
    if node.op != "call_function":
        return None
    if node.target is HOP_MUTATION:
        return "mutation"
    if node.target is HOP_FUNCTIONAL:
        return "functional"
    return None


def side_table_kernel(kernel_idx: int) -> Any:
    """The kernel object Dynamo stored for this HOP (a JITFunction or Autotuner).

    Only valid while the compile that made the index is alive: torch 2.13+
    resets the table in `torch._dynamo.reset()` (not 2.11).
    """
    return _tkw.kernel_side_table.get_kernel(kernel_idx)


def side_table_constants(constant_args_idx: int) -> dict[str, Any]:
    return dict(_tkw.kernel_side_table.get_constant_args(constant_args_idx))


def hop_fields(node: torch.fx.Node) -> dict[str, Any]:
    """The HOP node kwargs tritoninspect reads. torch 2.14 adds an optional
    `launch_kwargs` only when non-empty, hence `.get` for everything optional."""
    kw = node.kwargs
    try:
        return {
            "kernel_idx": kw["kernel_idx"],
            "constant_args_idx": kw["constant_args_idx"],
            "grid": kw["grid"],
            "kwargs": kw["kwargs"],
            "tma": kw.get("tma_descriptor_metadata", {}),
            "tensors_to_clone": kw.get("tensors_to_clone"),
            "launch_kwargs": kw.get("launch_kwargs", {}),
        }
    except KeyError as exc:
        raise CaptureError(f"unknown triton_kernel_wrapper layout: no {exc} in {sorted(kw)}") from exc


# --- from kernel object to the user's kernel --------------------------------


def innermost_jit(kernel: Any) -> JITFunction | None:
    """Walk Autotuner -> [Heuristics] -> JITFunction. The JITFunction is the
    stable identity of a user kernel: Dynamo may store a synthesised Autotuner
    in the side table (triton_kernel_wrap.py, TritonHOPifier)."""
    seen = 0
    while not isinstance(kernel, JITFunction):
        kernel = getattr(kernel, "fn", None)
        seen += 1
        if kernel is None or seen > 8:
            return None
    return kernel


def kernel_id(jf: JITFunction) -> str:
    """A stable id for a user kernel: module.qualname."""
    fn = jf.fn
    return f"{fn.__module__}.{fn.__qualname__}"


def kernel_source(jf: JITFunction) -> tuple[str | None, int | None]:
    """(file, line) of the kernel's `def`, as Inductor prints in `# Original path:`."""
    try:
        _, line = inspect.getsourcelines(jf.fn)
        return inspect.getsourcefile(jf.fn), line
    except (OSError, TypeError):
        return None, None


def constexpr_params(jf: JITFunction) -> tuple[str, ...]:
    return tuple(p.name for p in jf.params if p.is_constexpr)


def user_kernel_object(jf: JITFunction) -> Any:
    """The outermost decorated object the user defined around `jf`.

    The side table loses the user's decorator stack (Heuristics folded into
    configs), so look in the kernel module's globals for the Autotuner /
    Heuristics that wraps this very JITFunction.
    """
    candidates = [
        v
        for v in jf.fn.__globals__.values()
        if isinstance(v, (Autotuner, Heuristics)) and innermost_jit(v) is jf
    ]
    inner = {id(getattr(c, "fn", None)) for c in candidates}
    outer = [c for c in candidates if id(c) not in inner]
    return outer[0] if outer else jf


def decorator_stack(obj: Any) -> list[Any]:
    """The decorator layers from outermost to the JITFunction."""
    layers = []
    while obj is not None and len(layers) < 8:
        layers.append(obj)
        if isinstance(obj, JITFunction):
            break
        obj = getattr(obj, "fn", None)
    return layers


def layer_name(layer: Any) -> str:
    if isinstance(layer, Autotuner):
        return "autotune"
    if isinstance(layer, Heuristics):
        return "heuristics"
    if isinstance(layer, JITFunction):
        return "jit"
    return type(layer).__name__


def autotune_configs(layer: Autotuner) -> list[dict[str, Any]]:
    return [dict(c.all_kwargs()) for c in layer.configs]


def autotune_key(layer: Autotuner) -> list[str]:
    # Autotuner.keys holds the `key=` argument names in triton 3.x.
    return list(getattr(layer, "keys", []) or [])


def heuristic_names(layer: Heuristics) -> list[str]:
    return list(layer.values)


# --- custom ops and triton_ops -----------------------------------------------


def op_name(target: Any) -> str | None:
    """'ns::name' for an OpOverload / OpOverloadPacket target, else None."""
    schema = getattr(target, "_schema", None)
    return schema.name if schema is not None else None


def _opdefs() -> Any:
    # torch/_library/custom_ops.py: OPDEFS maps qualname -> CustomOpDef (2.4+).
    from torch._library.custom_ops import OPDEFS

    return OPDEFS


def is_custom_op(name: str) -> bool:
    return name in _opdefs()


def triton_op_kernels(name: str) -> list[Any]:
    """The kernels a `triton_op` registered (best-effort AST scan in torch;
    empty for a plain custom_op). torch/_library/triton.py."""
    from torch._library.triton import get_triton_kernels_for_op

    return list(get_triton_kernels_for_op(name))


def is_triton_op(name: str) -> bool:
    """A triton_op has a FunctionalTensorMode dispatch rule (its decomposition
    into the HOP) and registered kernels; a custom_op has neither."""
    if triton_op_kernels(name):
        return True
    opdef = _opdefs().get(name)
    fns = getattr(opdef, "_torch_dispatch_fns", {}) if opdef is not None else {}
    return any(cls.__name__ == "FunctionalTensorMode" for cls in fns)


def custom_op_codes() -> dict[CodeType, str]:
    """Code objects of every custom op's Python implementation -> op name, to
    find launches made inside an opaque op by walking the stack."""
    codes = {}
    for name, opdef in list(_opdefs().items()):
        fn = getattr(opdef, "_init_fn", None)
        code = getattr(fn, "__code__", None)
        if code is not None:
            codes[code] = name
    return codes


def source_fn_op(node: torch.fx.Node) -> str | None:
    """The op a post-AOT HOP node was decomposed from (a triton_op), if any."""
    stack = node.meta.get("source_fn_stack") or []
    if not stack:
        return None
    return op_name(stack[-1][1])


# --- compile ids, frames ------------------------------------------------------


def current_compile_id() -> str | None:
    """'0/0', '1/0', '0/1' as torch prints it (torch._guards.CompileId.__str__)."""
    from torch._guards import CompileContext

    cid = CompileContext.current_compile_id()
    return str(cid) if cid is not None else None


def frames(start: FrameType | None = None) -> Iterator[FrameType]:
    frame = start or sys._getframe(1)
    while frame is not None:
        yield frame
        frame = frame.f_back


def graph_module_code_file(gm: torch.fx.GraphModule) -> str:
    """The file name of `gm`'s generated forward (e.g. "<eval_with_key>.3").

    Dynamo hands backends a _LazyGraphModule (torch 2.3+) whose forward is a
    stub until first called; generate the real code first so the name we
    remember is the one launches will run under.
    """
    real_recompile = getattr(gm, "real_recompile", None)
    if callable(real_recompile):
        real_recompile()
    return gm.forward.__code__.co_filename


# --- mutation analysis fallback ----------------------------------------------

#: Logger and text of the fallback warning (triton_kernel_wrap.py; 2.11 names
#: the function identify_mutated_tensors, 2.13+ identify_accessed_tensors).
MUTATION_LOGGER = "torch._dynamo"
MUTATION_FALLBACK_TEXT = "assuming every input is mutated"
_MUTATION_FUNCS = ("identify_accessed_tensors", "identify_mutated_tensors")


def kernel_under_mutation_analysis() -> Any:
    """The kernel object being analysed, read from the analysis frame; the
    warning itself names no kernel."""
    for frame in frames():
        if frame.f_code.co_name in _MUTATION_FUNCS:
            return frame.f_locals.get("kernel")
    return None


def mutation_fallback_location(cause: BaseException | None) -> tuple[str | None, int | None]:
    """(file, line) in the kernel of the op that made mutation analysis give up.

    The exception names a TTIR op ("... do not know how to analyze:
    tt.elementwise_inline_asm", triton_kernel_wrap.py analyze_kernel_access,
    2.11-2.14); the analysis frame still holds the TTIR module (local
    `ttir_module`, 2.13-2.14; `ttir_module` in 2.11's identify_mutated_tensors
    too), whose `loc(...)` attributes lead back to the kernel source.
    """
    op = re.search(r"\btt\.\w+", str(cause or ""))
    if op is None:
        return None, None
    for frame in frames():
        if frame.f_code.co_name in _MUTATION_FUNCS:
            module = frame.f_locals.get("ttir_module")
            return ttir_op_location(str(module), op.group(0)) if module is not None else (None, None)
    return None, None


# --- structured trace ---------------------------------------------------------

#: torch/_logging/_internal.py: trace_structured emits here whenever the
#: logger has a handler (TORCH_TRACE not needed). Stable since torch 2.2.
TRACE_LOGGER = "torch.__trace"


def trace_compile_id(record: Any) -> str | None:
    meta = getattr(record, "metadata", {})
    if "frame_id" not in meta:
        return None
    return f"{meta['frame_id']}/{meta['frame_compile_id']}"


def trace_event(record: Any) -> tuple[str, str | None, dict[str, Any]]:
    """(event name, artifact name, event metadata) of a trace record."""
    meta = getattr(record, "metadata", {})
    name = next(iter(meta), "")
    body = meta.get(name) if isinstance(meta.get(name), dict) else {}
    sub = body.get("name") if name == "artifact" else None
    return name, sub, body


# --- Inductor -------------------------------------------------------------------


def output_code_part() -> str:
    """forward / backward / inference for the graph Inductor is generating.
    torch/_inductor/virtualized.py V.graph (GraphLowering.is_backward/is_inference)."""
    from torch._inductor.virtualized import V

    graph = V.graph
    if getattr(graph, "is_backward", False):
        return "backward"
    if getattr(graph, "is_inference", False):
        return "inference"
    return "forward"


def inductor_config_patches(record_post_grad: Any) -> list[tuple[Any, str, Any]]:
    """(object, attribute, value) triples set for the duration of a capture."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    patches = [
        # Fresh compiles only: a cache hit skips post-grad passes (codecache.py).
        (inductor_config, "force_disable_caches", True),
        # A plain callable here bypasses the FX/AOT caches as well.
        (inductor_config, "post_grad_custom_post_pass", record_post_grad),
        # Compile the backward with the forward, not at the first .backward()
        # (torch/_functorch/_aot_autograd/graph_compile.py, 2.11+).
        (functorch_config, "force_non_lazy_backward_lowering", True),
    ]
    # Precompiled C++ headers live in <tempdir>/torchinductor_$USER/precompiled_headers
    # whatever the cache dir (codecache.py `_HEADER_DIR`, checked in torch 2.13) and outlive the
    # run; without them a capture leaves nothing in the temp dir (see capture/scratch.py).
    if hasattr(inductor_config, "cpp_cache_precompile_headers"):
        patches.append((inductor_config, "cpp_cache_precompile_headers", False))
    return patches


def graph_lowering_class() -> Any:
    """GraphLowering; its `save_output_code` hook (a no-op meant for tests) is
    called with the wrapper source before the module is loaded (graph.py)."""
    from torch._inductor.graph import GraphLowering

    return GraphLowering


def caching_autotuner_class() -> Any:
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    return CachingAutotuner


def inductor_kernel_name(autotuner: Any) -> str | None:
    meta = getattr(autotuner, "inductor_meta", None) or {}
    return meta.get("kernel_name")


def is_user_kernel_launcher(autotuner: Any) -> bool:
    """Inductor marks user-defined kernels with custom_kernel=True (user_autotune)."""
    return bool(getattr(autotuner, "custom_kernel", False))


def epilogue_fusion_user_kernels() -> bool | None:
    """torch._inductor.config.epilogue_fusion_user_defined_triton_kernel: lets
    Inductor fuse a pointwise epilogue into a user kernel (torch 2.8+, off by
    default; ir.UserDefinedTritonKernel.can_fuse_epilogue). None where absent."""
    import torch._inductor.config as inductor_config

    value = getattr(inductor_config, "epilogue_fusion_user_defined_triton_kernel", None)
    return None if value is None else bool(value)


def tensor_info(value: Any) -> tuple[str, int | None] | None:
    """("float32[64]", bytes) for an FX node whose meta["val"] is a tensor; bytes
    None for symbolic sizes. None for anything else."""
    example = value.meta.get("val", value.meta.get("example_value")) if isinstance(value, torch.fx.Node) else value
    if not isinstance(example, torch.Tensor):
        return None
    shape = ", ".join(str(d) for d in example.shape)
    dtype = str(example.dtype).replace("torch.", "")
    # Never int() a symbolic numel: that guards on its value and specialises the
    # user's dynamic compile (the recompile's grid became "3" instead of "((s77 + 31)//32)").
    numel = example.numel()
    size = numel * example.element_size() if isinstance(numel, int) else None
    return f"{dtype}[{shape}]", size


def inductor_cloned_args(node: torch.fx.Node) -> dict[str, int | None]:
    """Arguments of a final post-grad `triton_kernel_wrapper_mutation` node that
    Inductor cloned for it -> bytes of the copy.

    Post-grad `decompose_triton_kernel_wrapper_functional` (fx_passes/post_grad.py)
    turns the functional HOP into `clone_preserve_strides` of each argument
    re-inplacing left in `tensors_to_clone`, then the mutation HOP; that clone
    is `as_strided(clone(as_strided(x)))` (torch/_inductor/utils.py, 2.11-2.14).
    A clone the user wrote feeds the kernel directly, without the as_strided.
    """
    cloned: dict[str, int | None] = {}
    for name, value in dict(node.kwargs.get("kwargs", {})).items():
        if not (isinstance(value, torch.fx.Node) and value.target is torch.ops.aten.as_strided.default):
            continue
        source = value.args[0]
        if isinstance(source, torch.fx.Node) and source.target is torch.ops.aten.clone.default:
            info = tensor_info(source)
            cloned[name] = info[1] if info else None
    return cloned


@functools.cache
def aten_op_names() -> frozenset[str]:
    """Names of every registered aten op ("sin", "native_layer_norm", "_to_copy"):
    the words Inductor joins into fused kernel names (cpp_fused_cos_mul_1)."""
    names = torch._C._dispatch_get_all_op_names()
    return frozenset(n.split("::", 1)[1].split(".", 1)[0] for n in names if n.startswith(("aten::", "prims::")))


def compile_fx(gm: torch.fx.GraphModule, example_inputs: Any, inner_compile: Any) -> Any:
    from torch._inductor.compile_fx import compile_fx as _compile_fx

    return _compile_fx(gm, example_inputs, inner_compile=inner_compile)


def compile_fx_inner() -> Any:
    from torch._inductor.compile_fx import compile_fx_inner as inner

    return inner


def aot_autograd_backend(**compilers: Any) -> Any:
    """AOTAutograd with our fw/bw/inference compilers (torch._dynamo.backends.common)."""
    from torch._dynamo.backends.common import aot_autograd

    return aot_autograd(**compilers)


# --- compile-only mode (no GPU): stub driver and interpreter launches ---------
#
# Without an active driver Triton cannot generate TTIR, so Dynamo graph-breaks
# and mutation analysis fails. A stub driver that reports a GPU target makes
# TTIR generation (and so Dynamo, AOTAutograd and Inductor) work; launches go
# through Triton's interpreter so the compiled model still runs on CPU.


def stub_driver(arch: int = 90, warp_size: int = 32) -> Any:
    """A Triton driver that compiles for `cuda:sm_<arch>` and launches nothing."""
    from triton.backends.compiler import GPUTarget
    from triton.backends.driver import DriverBase

    class CompileOnlyDriver(DriverBase):
        @classmethod
        def is_active(cls) -> bool:
            return True

        def map_python_to_cpp_type(self, ty: str) -> str:
            return "void*"

        def get_current_target(self) -> Any:
            return GPUTarget("cuda", arch, warp_size)

        def get_active_torch_device(self) -> Any:
            return torch.device("cpu")

        def get_benchmarker(self) -> Any:
            raise NotImplementedError("compile-only mode has no benchmarker")

        def get_current_device(self) -> int:
            return 0

        def set_current_device(self, device: int) -> None:
            return None

        def get_current_stream(self, device: int | None = None) -> int:
            return 0

        def get_device_capability(self, device: int = 0) -> tuple[int, int]:
            return divmod(arch, 10)

    return CompileOnlyDriver()


def triton_driver_config() -> Any:
    """triton.runtime.driver (a DriverConfig with a private `_active`, triton 3.2+)."""
    from triton.runtime import driver

    if not hasattr(driver, "_active"):
        raise CaptureError("unsupported triton: triton.runtime.driver has no _active slot")
    return driver


def prime_has_triton() -> None:
    """Make torch's cached `has_triton()` answer True on a CPU-only machine.

    `has_triton` is a functools.cache'd function imported by name in many
    modules, so replacing the attribute is not enough: clear the cache and
    refill it while the CPU device check passes ("cpu" in triton's backends).
    `reset_has_triton` clears it again on exit.
    """
    import triton.backends
    from torch.utils import _triton

    _triton.has_triton.cache_clear()
    added = "cpu" not in triton.backends.backends
    if added:
        triton.backends.backends["cpu"] = None  # type: ignore[assignment]
    try:
        if not _triton.has_triton():
            raise CaptureError("could not make torch see Triton in compile-only mode")
    finally:
        if added:
            del triton.backends.backends["cpu"]


def reset_has_triton() -> None:
    from torch.utils import _triton

    _triton.has_triton.cache_clear()


def tma_patches() -> list[tuple[Any, str, Any]]:
    """Let Dynamo accept host-side TensorDescriptors on CPU. torch 2.14 renamed
    `_device_supports_tma` to `_device_supports_tensor_descriptor`."""
    from torch.utils import _triton

    patches = []
    for name in ("_device_supports_tma", "_device_supports_tensor_descriptor"):
        if hasattr(_triton, name):
            patches.append((_triton, name, lambda: True))
    return patches


def clear_tma_caches() -> None:
    from torch.utils import _triton

    for name in ("has_triton_tensor_descriptor_host_tma", "has_triton_experimental_host_tma"):
        fn = getattr(_triton, name, None)
        if hasattr(fn, "cache_clear"):
            fn.cache_clear()


def interpreted(fn: Any) -> Any:
    from triton.runtime.interpreter import InterpretedFunction

    return InterpretedFunction(fn)


def interpreter_limits() -> tuple[type[BaseException], ...]:
    """Errors that mean "the interpreter cannot run this", not "the kernel is wrong"
    (e.g. tl.inline_asm_elementwise: NotImplementedError inside InterpreterError)."""
    from triton.runtime.errors import InterpreterError

    return (InterpreterError, NotImplementedError)


def _interpret(fn: Any, grid: Any, args: tuple[Any, ...], kwargs: dict[str, Any], on_skip: Any) -> Any:
    """Launch `fn` in the interpreter; on an interpreter limitation, skip the
    launch (its outputs stay unwritten) and tell `on_skip` instead of failing
    the whole capture: the graphs and output code are what compile-only mode is for."""
    try:
        return interpreted(fn)[grid](*args, **kwargs)
    except interpreter_limits() as exc:
        on_skip(getattr(fn, "__name__", str(fn)), exc)
        return None


def make_jit_run(on_skip: Any, original: Any = None) -> Any:
    """JITFunction.run through Triton's interpreter (triton 3.6-3.8 signature).

    A warmup launches nothing, so it goes to `original` (Triton's own run) when
    given: it compiles for the stub driver's target (sm_90), which is how
    `--resources` measures kernels in compile-only mode. torch never warms up
    user kernels (no `warmup=True` in torch/_inductor, _dynamo, _library, 2.13).
    """

    def run(self: JITFunction, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> Any:
        if warmup:
            return original(self, *args, grid=grid, warmup=True, **kwargs) if original is not None else None
        kwargs = {k: v for k, v in kwargs.items() if k not in _LAUNCH_ONLY_KWARGS}
        return _interpret(self.fn, grid, args, kwargs, on_skip)

    return run


#: Launch options the interpreter has no use for.
_LAUNCH_ONLY_KWARGS = frozenset(
    {"num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid",
     "launch_pdl", "stream", "debug", "sanitize_overflow"}
)


def jit_call_interpreted(self: JITFunction, *args: Any, **kwargs: Any) -> Any:
    """A nested @triton.jit function called from an interpreted kernel."""
    return interpreted(self.fn)(*args, **kwargs)


def autotuner_run_first_config(self: Autotuner, *args: Any, **kwargs: Any) -> Any:
    """Autotuner.run without benchmarking: the first config (after pruning)."""
    config = self.configs[0]
    self.best_config = config
    return self.fn.run(*args, **kwargs, **config.all_kwargs())


def inductor_run_interpreted(original: Any, on_skip: Any) -> Any:
    """CachingAutotuner.run for user kernels in TRITON_INTERPRET mode.

    Inductor's own interpret path misaligns args for kernels with constexprs
    (`_interpret_args_grid` -> NameError '_grid_2', torch 2.13), so map the
    launcher args by name from triton_meta / inductor_meta instead.
    """

    def run(self: Any, *args: Any, stream: Any = None, benchmark_run: bool = False, **kwargs: Any) -> Any:
        if not (getattr(self, "triton_interpret", False) and is_user_kernel_launcher(self)):
            return original(self, *args, stream=stream, benchmark_run=benchmark_run, **kwargs)
        return _launch_user_kernel_interpreted(self, args, on_skip)

    return run


def _launch_user_kernel_interpreted(autotuner: Any, args: tuple[Any, ...], on_skip: Any) -> Any:
    from torch._inductor.runtime.triton_heuristics import GridExpr

    meta, imeta = autotuner.triton_meta, autotuner.inductor_meta
    cfg = autotuner.configs[0]
    constants = dict(meta.get("constants", {}))
    names = [n for n, ty in meta["signature"].items() if ty != "constexpr" and n not in constants and n not in cfg.kwargs]
    extra = list(imeta.get("extra_launcher_args", ()))
    named = dict(zip(names + extra, args))
    grid = GridExpr.from_meta(imeta, cfg).eval_slow(named)
    kernel_args = {n: named[n] for n in names}
    kernel_args.update({k: v for k, v in constants.items() if k in meta["signature"]})
    kernel_args.update(cfg.kwargs)
    fn = autotuner.fn
    return _interpret(getattr(fn, "fn", fn), grid, (), kernel_args, on_skip)


# --- kernel resources (--resources) ---------------------------------------------
#
# A kernel is compiled once per autotune config through a fresh copy of its
# JITFunction: `warmup()` binds and specialises the arguments exactly as a
# launch would (pointer alignment, ints divisible by 16), compiles for the
# active driver's target and launches nothing (triton/runtime/jit.py
# `KernelInterface.warmup` / `JITFunction.run`, same in triton 3.6-3.8). A copy,
# so its binder is made for the driver active now (the stub's `--target` in
# compile-only mode) and the user's kernel cache is left alone.


def compile_kernel(jf: JITFunction, args: dict[str, Any], options: dict[str, Any]) -> Any:
    """Compile `jf` for the active target; `args` by parameter name (a torch.dtype
    stands for a tensor of that dtype: `MockTensor.wrap_dtype`)."""
    import copy
    from collections import defaultdict

    from triton.runtime.jit import MockTensor

    fresh = copy.copy(jf)
    fresh.device_caches = defaultdict(fresh.create_binder)
    # warmup() wraps dtypes given positionally only; these go by name.
    named = {name: MockTensor.wrap_dtype(value) for name, value in args.items()}
    compiled = fresh.warmup(grid=(1,), **named, **options)
    if compiled is None:
        raise CaptureError(f"Triton returned no compiled kernel for {jf.fn.__name__}")
    # An async compile returns a future (triton knobs.compilation.async_compile).
    return compiled.result() if hasattr(compiled, "result") else compiled


def compiled_metadata(compiled: Any) -> dict[str, Any]:
    """Shared memory (bytes), warps, stages and target of a CompiledKernel
    (`CompiledKernel.metadata`, a namedtuple of the backend's options)."""
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
    (triton/backends/nvidia/driver.c `loadBinary`, triton 3.6-3.8)."""
    compiled._init_handles()
    return getattr(compiled, "n_regs", None), getattr(compiled, "n_spills", None)


_RES_USAGE_RE = re.compile(r"\bREG:(?P<reg>\d+)\b.*?\bLOCAL:(?P<local>\d+)\b")


def cubin_usage(compiled: Any) -> tuple[int | None, int | None]:
    """(registers, spills) of a compiled kernel that cannot be loaded here, from
    the cuobjdump bundled in the triton wheel (`knobs.nvidia.cuobjdump`,
    triton/backends/nvidia/bin): `cuobjdump -res-usage` prints
    `REG:30 STACK:0 SHARED:0 LOCAL:0 ...`. Spills as the driver counts them:
    local memory bytes / 4."""
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
        # SymNode.has_hint() / .hint (torch/fx/experimental/sym_node.py, 2.11-2.14).
        node = example.node
        return int(node.hint) if node.has_hint() else 2
    return example


def config_dicts(kernel: Any) -> list[dict[str, Any]]:
    """Each autotune config of the kernel object a HOP launches (kwargs plus the
    launch options that are set), or one empty config for a plain JITFunction.
    Dynamo's synthesised Autotuner already holds the heuristics' values (§1)."""
    if isinstance(kernel, Autotuner):
        return [{k: v for k, v in c.all_kwargs().items() if v is not None} for c in kernel.configs]
    return [{}]


# --- text formats torch emits --------------------------------------------------
#
# Graph-break reasons and output code reach us as text. The layouts below are
# torch's (symbolic_convert.py / convert_frame.py / exc.py for breaks,
# codegen/wrapper.py for output code, 2.11-2.14); an unknown layout degrades
# to "reason = first line, no location", never to an exception.

#: Op namespaces that belong to torch itself, never a user's custom op.
TORCH_OP_NAMESPACES = frozenset(
    {"aten", "prims", "inductor", "higher_order", "_c10d_functional", "c10d_functional", "quantized",
     "_quantized", "profiler", "debugprims", "rngprims", "_dynamo", "_operator"}
)

_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)', re.M)
_BREAK_AT_RE = re.compile(r"^Graph break in user code at (?P<file>.+):(?P<line>\d+)$", re.M)
_WONT_CONVERT_RE = re.compile(r"^WON'T CONVERT (?P<func>\S+) (?P<file>.+) line (?P<line>\d+)$", re.M)
#: Texts meaning Dynamo gave up on the whole frame and ran it eagerly
#: (convert_frame.py's skip message; exc.py's "Skipping the function ..." for
#: breaks it cannot resume from, e.g. inside try/finally, torch 2.11-2.14).
_SKIP_TEXTS = ("torch.compile will skip tracing the frame", "Skipping the function and falling back to eager")

def is_user_file(path: str) -> bool:
    """False for torch, triton, this tool, the CLI libraries and our console script
    (decided by where they are installed: tritoninspect/origin.py)."""
    return origin.is_user_file(path)


def parse_graph_break(payload: str) -> tuple[str, str | None, int | None, tuple[str, ...], bool]:
    """(reason, file, line, user stack, frame skipped) from a
    `dynamo_graph_break_reason` artifact. file:line is the user's own innermost
    frame, also when Dynamo broke inside a library (see `graph_break_details`)."""
    head, _, _exc = payload.partition("\nTraceback (most recent call last):")
    stack = tuple(
        f"{m['file']}:{m['line']} in {m['func']}" for m in _FRAME_RE.finditer(head) if is_user_file(m["file"])
    )
    skipped = any(text in payload for text in _SKIP_TEXTS)
    at = _BREAK_AT_RE.search(payload)
    if at:
        reason = head.split("Graph Break Reason:", 1)[-1].split("\nUser code traceback:", 1)[0].strip()
        # Dynamo names the frame it was tracing, which can be a library's (e.g.
        # triton/runtime/jit.py's launch lambda): report the user's own frame.
        file, line = _own_location(stack) if not is_own_file(at["file"]) else (None, None)
        return _drop_preamble(reason), file or at["file"], line or int(at["line"]), stack, skipped
    file, line = _last_location(stack)
    if skipped:
        error = _exception_line(_exc)
        reason = payload.strip().splitlines()[0]
        return (f"{reason} ({error})" if error else reason), file, line, stack, True
    won = _WONT_CONVERT_RE.search(payload)
    if won:
        tail = [ln for ln in payload.splitlines() if ln and not ln.startswith((" ", "=", "Traceback"))]
        reason = tail[1] if len(tail) > 1 else tail[0]
        return reason, file or won["file"], line or int(won["line"]), stack, True
    first = payload.strip().splitlines()[0] if payload.strip() else ""
    return first, file, line, stack, skipped


def _exception_line(traceback_text: str) -> str:
    """The 'ExcType: message' line of the last traceback in `traceback_text`
    (not the "For more details ... visit" trailer torch 2.6+ appends)."""
    last = traceback_text.rsplit("Traceback (most recent call last):", 1)[-1]
    for line in last.splitlines():
        if line and not line.startswith((" ", "\t", "Traceback")):
            return line.strip()
    return ""


#: torch 2.6+ opens every reason with this line; the graph-break type follows.
_PREAMBLE_RE = re.compile(r"^Encountered graph break when attempting to trace [^\n]*:\n+")


def _drop_preamble(reason: str) -> str:
    return _PREAMBLE_RE.sub("", reason, count=1).strip()


def _last_location(stack: tuple[str, ...]) -> tuple[str | None, int | None]:
    if not stack:
        return None, None
    loc = stack[-1].rsplit(" in ", 1)[0]
    file, _, line = loc.rpartition(":")
    return file, int(line)


def is_library_file(path: str) -> bool:
    """Installed third-party or standard-library code (site dirs, `pip install --target` dirs, the stdlib)."""
    return origin.is_library_file(path)


def is_own_file(path: str) -> bool:
    """The user's own code: neither torch/triton/this tool nor an installed library."""
    return origin.is_own_file(path)


def _own_location(stack: tuple[str, ...]) -> tuple[str | None, int | None]:
    own = tuple(f for f in stack if is_own_file(f.rsplit(" in ", 1)[0].rpartition(":")[0]))
    return _last_location(own)


# --- graph-break details ---------------------------------------------------------
#
# torch 2.6+ formats an `Unsupported` as "<gb_type>\n  Explanation: ...\n  Hint:
# ...\n\n  Developer debug context: ...\n\n For more details about this graph
# break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/
# gbNNNN.html" (exc.py `unimplemented`, `get_gbid_documentation_link`, ~line 663
# in 2.13). symbolic_convert.py prefixes the reason when it cannot resume after
# the break (~line 1657) or gives up on the whole frame (~line 1976). Older or
# unknown layouts give a headline from the first line and no id.

_GB_URL_RE = re.compile(r"(?P<url>https?://\S+/gb/gb(?P<id>\d+)\.html)")
_EXPLANATION_RE = re.compile(r"^\s*Explanation:\s*(?P<text>.*)$", re.M)
_NO_RESUME_TEXT = "Encountered graph break that we cannot resume from"
_ANY_PREAMBLE_RE = re.compile(
    r"^(?:Encountered graph break when attempting to trace [^\n]*:"
    r"|(?:Encountered graph break that we cannot resume from|Failed to handle graph break gracefully)\."
    r"[^\n]*Graph break encountered:)\s*"
)


def graph_break_details(payload: str) -> dict[str, Any]:
    """What `parse_graph_break` leaves out: a one-line headline, the graph-break
    id and documentation link, whether Dynamo skipped the rest of the frame,
    and the library frame the break happened in (when not the user's own)."""
    head = payload.partition("\nTraceback (most recent call last):")[0]
    body = head.split("Graph Break Reason:", 1)[-1].split("\nUser code traceback:", 1)[0].strip()
    url = _GB_URL_RE.search(body)
    return {
        "headline": _headline(body),
        "gb_id": f"GB{url['id']}" if url else None,
        "doc_url": url["url"] if url else None,
        "skipped_rest": _NO_RESUME_TEXT in body,
        "library_frame": _library_frame(head),
    }


def _headline(body: str) -> str:
    """The graph-break type, with the explanation when it only restates the type
    ("triton kernel unsupported feature: pre_hook and post_hook are not supported ...")."""
    text = _ANY_PREAMBLE_RE.sub("", body, count=1).strip()
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    explanation = _EXPLANATION_RE.search(text)
    prefix = f"Encountered {first}:"
    if explanation and explanation["text"].startswith(prefix):
        return f"{first}: {explanation['text'][len(prefix):].strip()}"
    return first


def _library_frame(head: str) -> str | None:
    """`file:line in func` of the innermost frame when it is not the user's own
    code: the frame Dynamo was tracing, or an installed library's frame."""
    frames = [(m["file"], m["line"], m["func"]) for m in _FRAME_RE.finditer(head)]
    at = _BREAK_AT_RE.search(head)
    if at and not is_own_file(at["file"]):
        func = next((f for file, line, f in reversed(frames) if (file, line) == (at["file"], at["line"])), None)
        return f"{at['file']}:{at['line']}" + (f" in {func}" if func else "")
    mine = [f for f in frames if is_user_file(f[0])]
    if mine and is_library_file(mine[-1][0]):
        file, line, func = mine[-1]
        return f"{file}:{line} in {func}"
    return None


# --- Dynamo bytecode hooks (for --decompile) ----------------------------------------


def register_bytecode_hook(hook: Any) -> Any:
    """Call `hook(original_code, transformed_code)` for every frame Dynamo
    converts; returns a handle with `.remove()`. torch/_dynamo/convert_frame.py
    `register_bytecode_hook` (torch 2.1+, unchanged to 2.14)."""
    from torch._dynamo.convert_frame import register_bytecode_hook as register

    return register(hook)


_USER_KERNEL_RE = re.compile(
    r"^# Original path: (?P<file>.+):(?P<line>\d+)\n(?P<iname>\w+) = async_compile\.triton\('(?P<name>\w+)'",
    re.M,
)
_EXTERN_OP_RE = re.compile(r"\btorch\.ops\.(?P<ns>\w+)\.(?P<op>\w+)\.\w+\(")


def parse_output_code(code: str) -> tuple[tuple[Any, ...], tuple[str, ...]]:
    """User kernels defined in an Inductor output module (with whether they are
    launched) and the custom ops it calls as extern kernels."""
    from tritoninspect.capture.records import OutputKernel

    kernels = tuple(
        OutputKernel(m["iname"], m["name"], m["file"], int(m["line"]), bool(re.search(rf"\b{m['iname']}\.run\(", code)))
        for m in _USER_KERNEL_RE.finditer(code)
    )
    ops = []
    for m in _EXTERN_OP_RE.finditer(code):
        name = f"{m['ns']}::{m['op']}"
        if m["ns"] not in TORCH_OP_NAMESPACES and name not in ops:
            ops.append(name)
    return kernels, tuple(ops)


# --- Inductor output code: what `call()` launches, in order (pure text) -------
#
# Inductor's wrapper (codegen/wrapper.py, cpp.py) defines each kernel at module
# level (`name = async_compile.triton('...', '''...''')` for Triton,
# `name = async_compile.cpp_pybinding([...], r'''...''')` for C++; a user
# kernel carries `# Original path:` above it) and launches them from `call()`:
# `name.run(args, stream=...)` (Triton), `name(args)` (C++), plus extern calls
# (`extern_kernels.mm(..., out=buf0)`, `buf1 = torch.ops.ns.op.default(...)`).
# It writes `# Topologically Sorted Source Nodes: [...], Original ATen: [...]`
# above GPU launches (torch 2.5+; `# Source Nodes:` before), not above C++ ones.
# Layout read in torch 2.11, 2.13 and 2.14; unknown lines are skipped.

_KERNEL_DEF_RE = re.compile(r"^(?P<name>\w+) = async_compile\.(?P<how>\w+)\(", re.M)
_TRITON_PARAMS_RE = re.compile(r"^def \w+\((?P<params>[^)]*)\)", re.M)
_CPP_PARAMS_RE = re.compile(r'extern "C"[^(]*?\bkernel\((?P<params>[^)]*)\)', re.S)
_SIGNATURE_RE = re.compile(r"'signature': \{(?P<body>[^}]*)\}")
_SOURCE_NODES_RE = re.compile(r"#\s*(?:Topologically Sorted )?Source Nodes: \[(?P<nodes>[^\]]*)\], Original ATen: \[(?P<ops>[^\]]*)\]")
_FUSED_NAME_RE = re.compile(r"^(?:triton_[a-z]+_|cpp_)fused_(?P<ops>.+?)_\d+$")
_RUN_RE = re.compile(r"^\s*(?P<name>\w+)\.run\((?P<args>.*)\)\s*$")
_DIRECT_CALL_RE = re.compile(r"^\s*(?P<name>\w+)\((?P<args>.*)\)\s*$")
_EXTERN_RE = re.compile(
    r"^\s*(?:(?P<out>\w+) = )?(?P<name>extern_kernels\.\w+|torch\.ops\.\w+\.\w+\.\w+|aten\.\w+\.\w+)\((?P<args>.*)\)\s*$"
)
_COPY_METHOD_RE = re.compile(r"^\s*(?P<dst>\w+)\.copy_\((?P<args>.*)\)\s*$")
_ALIAS_RE = re.compile(r"^\s*(?P<new>\w+) = (?:reinterpret_tensor\()?(?P<old>\w+)\b")
_ARGS_UNPACK_RE = re.compile(r"^\s*(?P<names>[\w, ]+?),? = args\s*$")
_BUFFER_NAME_RE = re.compile(r"^(?:buf\d+|arg\d+_\d+|primals_\d+|tangents_\d+)$")


def parse_code_calls(code: str, op_names: frozenset[str] = frozenset()) -> tuple[Any, ...]:
    """The launches and extern calls of an output module's `call()`, in order,
    as `CallRecord`s. `op_names` (e.g. `aten_op_names()`) splits fused kernel
    names into ops where no `Original ATen` comment says them."""
    from tritoninspect.capture.records import CallRecord

    defs = _kernel_defs(code)
    lines = code.splitlines()
    storage: dict[str, str] = {}
    calls, pending = [], None
    for number, line in _call_body(lines):
        comment = _SOURCE_NODES_RE.search(line)
        if comment:
            pending = comment
            continue
        if _track_buffers(line, storage):
            continue
        call = _launch(line, defs, storage)
        if call is None:
            continue
        kind, name, args = call
        ops, nodes = _launch_ops(kind, name, pending, op_names)
        calls.append(CallRecord(kind, name, number, args, ops, nodes))
        pending = None
    return tuple(calls)


def _kernel_defs(code: str) -> dict[str, tuple[str, tuple[tuple[str, bool], ...]]]:
    """name -> (kind, launch parameters as (name, is_buffer)) for every kernel the module defines."""
    defs = {}
    matches = list(_KERNEL_DEF_RE.finditer(code))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(code)
        body = code[m.start():end]
        user = code[max(0, m.start() - 400):m.start()].rstrip().rsplit("\n", 1)[-1].startswith("# Original path:")
        if user:
            defs[m["name"]] = ("user", _signature_params(body))
        elif m["how"] == "triton":
            defs[m["name"]] = ("inductor", _python_params(body))
        elif m["how"].startswith("cpp"):
            defs[m["name"]] = ("inductor", _cpp_params(body))
    return defs


def _signature_params(body: str) -> tuple[tuple[str, bool], ...]:
    """A user kernel's launch parameters from `triton_meta['signature']`:
    constexprs are not passed at launch; pointers ('*fp32') are buffers."""
    m = _SIGNATURE_RE.search(body)
    if m is None:
        return ()
    pairs = re.findall(r"'(\w+)': '([^']*)'", m["body"])
    return tuple((name, ty.startswith("*")) for name, ty in pairs if ty != "constexpr")


def _python_params(body: str) -> tuple[tuple[str, bool], ...]:
    m = _TRITON_PARAMS_RE.search(body)
    if m is None:
        return ()
    params = [p.strip() for p in m["params"].split(",") if p.strip() and "constexpr" not in p]
    return tuple((p, "ptr" in p) for p in params)


def _cpp_params(body: str) -> tuple[tuple[str, bool], ...]:
    m = _CPP_PARAMS_RE.search(body)
    if m is None:
        return ()
    params = [p.strip().split()[-1].lstrip("*&") for p in m["params"].split(",") if p.strip()]
    return tuple((p, "ptr" in p) for p in params)


def _call_body(lines: list[str]) -> Iterator[tuple[int, str]]:
    """(1-based number, line) of the body of `def call(...)` (module level or Runner.call)."""
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("def call(")), None)
    if start is None:
        return
    indent = len(lines[start]) - len(lines[start].lstrip())
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            return
        yield i + 1, line


def _track_buffers(line: str, storage: dict[str, str]) -> bool:
    """Follow `a, b = args`, aliases `buf2 = buf1` and views
    `buf2 = reinterpret_tensor(buf1, ...)` to the tensor a name stands for.
    `buf3 = buf1; del buf1  # reuse` makes buf3 a new tensor in buf1's memory:
    noted as `storage["buf3@reuses"] = buf1's root`."""
    unpack = _ARGS_UNPACK_RE.match(line)
    if unpack:
        for name in filter(None, (n.strip() for n in unpack["names"].split(","))):
            storage[name] = name
        return True
    alias = _ALIAS_RE.match(line)
    if alias and alias["old"] in storage and not _EXTERN_RE.match(line):
        if line.rstrip().endswith("# reuse"):
            storage[alias["new"]] = alias["new"]
            storage[alias["new"] + _REUSES] = storage[alias["old"]]
        else:
            storage[alias["new"]] = storage[alias["old"]]
        return True
    assigned = re.match(r"^\s*(?P<name>\w+) = (?:empty_strided\w*|torch\.empty\w*|alloc_from_pool)\(", line)
    if assigned:
        storage[assigned["name"]] = assigned["name"]
        storage[assigned["name"] + _ALLOCATED] = "1"
        return True
    return False


def _launch(line: str, defs: dict[str, Any], storage: dict[str, str]) -> tuple[str, str, tuple[Any, ...]] | None:
    """(kind, name, args) when `line` launches a kernel or calls an extern kernel."""
    run = _RUN_RE.match(line) or _DIRECT_CALL_RE.match(line)
    if run and run["name"] in defs:
        kind, params = defs[run["name"]]
        return kind, run["name"], _kernel_args(run["args"], params, storage, named_access=kind == "inductor")
    extern = _EXTERN_RE.match(line)
    if extern:
        if extern["out"]:
            storage.setdefault(extern["out"], extern["out"])
        return "extern", extern["name"], _extern_args(extern["args"], extern["out"], storage)
    copy = _COPY_METHOD_RE.match(line)
    if copy and copy["dst"] in storage:
        args = _extern_args(copy["args"], None, storage)
        return "extern", "copy_", (_arg("dst", copy["dst"], storage, "w"), *args)
    return None


def _kernel_args(
    text: str, params: tuple[tuple[str, bool], ...], storage: dict[str, str], *, named_access: bool
) -> tuple[Any, ...]:
    """Buffer arguments by parameter; a user kernel's parameter names say nothing about access."""
    positional = [a for a in split_call_args(text) if "=" not in a.split("(", 1)[0]]
    args = []
    for (param, is_buffer), value in zip(params, positional):
        buffer = _buffer_name(value)
        if is_buffer and buffer:
            args.append(_arg(param, buffer, storage, _access(param) if named_access else ""))
    return tuple(args)


def _extern_args(text: str, out: str | None, storage: dict[str, str]) -> tuple[Any, ...]:
    args = [_arg("out", out, storage, "w")] if out else []
    for i, value in enumerate(split_call_args(text)):
        key, eq, rest = value.partition("=")
        param, value = (key.strip(), rest.strip()) if eq and re.fullmatch(r"\s*\w+\s*", key) else (str(i), value)
        buffer = _buffer_name(value)
        if buffer and (buffer in storage or _BUFFER_NAME_RE.match(buffer)):
            args.append(_arg(param, buffer, storage, "w" if param == "out" else "r"))
    return tuple(args)


_REUSES, _ALLOCATED = "@reuses", "@allocated"


def _arg(param: str, buffer: str, storage: dict[str, str], access: str) -> Any:
    from tritoninspect.capture.records import ArgRecord

    root = storage.get(buffer, buffer)
    return ArgRecord(param, buffer, root, access, storage.get(buffer + _REUSES, ""), root + _ALLOCATED in storage)


def _buffer_name(value: str) -> str | None:
    """`buf0` -> buf0; `reinterpret_tensor(buf0, (64, ), (1, ), 0)` -> buf0; literals -> None."""
    value = value.strip()
    m = re.match(r"^reinterpret_tensor\((\w+)", value)
    if m:
        return m.group(1)
    if re.fullmatch(r"[A-Za-z_]\w*", value) and value not in ("None", "True", "False"):
        return value
    return None


def _access(param: str) -> str:
    """Inductor names kernel parameters by what the kernel does with them."""
    if param.startswith("in_out_ptr"):
        return "rw"
    if param.startswith("in_ptr"):
        return "r"
    if param.startswith("out_ptr"):
        return "w"
    return ""


def split_call_args(text: str) -> list[str]:
    """Split a call's argument text at top-level commas."""
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


def _launch_ops(kind: str, name: str, comment: Any, op_names: frozenset[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(ATen ops, source nodes) of an Inductor kernel. The comment above a user
    kernel or extern call repeats its neighbour's (seen on torch 2.11 and 2.13),
    so only Inductor kernels take it."""
    if kind != "inductor":
        return (), ()
    if comment is not None and comment["ops"].strip():
        ops = tuple(o.strip().removeprefix("aten.") for o in comment["ops"].split(",") if o.strip())
        nodes = tuple(n.strip() for n in comment["nodes"].split(",") if n.strip())
        return ops, nodes
    return fused_name_ops(name, op_names), ()


def fused_name_ops(name: str, op_names: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The ops in a fused kernel's name: cpp_fused_cos_mul_1 -> (cos, mul).

    Inductor joins op names with "_" (codegen/common.py get_fused_kernel_name),
    so "native_layer_norm" is one op only if `op_names` says so; without it,
    every "_" splits.
    """
    m = _FUSED_NAME_RE.match(name)
    if m is None:
        return ()
    text, ops, i = m["ops"], [], 0
    while i < len(text):
        end = _longest_op(text, i, op_names)
        ops.append(text[i:end])
        i = end + 1
    return tuple(o for o in ops if o)


def _longest_op(text: str, start: int, op_names: frozenset[str]) -> int:
    ends = [j for j in range(len(text), start, -1) if (j == len(text) or text[j] == "_") and text[start:j] in op_names]
    if ends:
        return ends[0]
    nxt = text.find("_", start + 1 if text[start] == "_" else start)
    return len(text) if nxt == -1 else nxt


_LOC_DEF_RE = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$", re.M)
_LOC_FILE_RE = re.compile(r'^"(?P<file>[^"]+)":(?P<line>\d+):\d+$')


def ttir_op_location(ttir: str, op: str) -> tuple[str | None, int | None]:
    """(file, line) of the first `op` in TTIR text, following its `loc(#locN)`
    through named locations (`#loc22 = loc("y"(#loc8))`) to a file position."""
    line = next((ln for ln in ttir.splitlines() if re.search(rf"(?<![\w.]){re.escape(op)}\b", ln)), None)
    if line is None:
        return None, None
    m = re.search(r"loc\((#loc\d*|\"[^\"]+\":\d+:\d+)\)\s*$", line)
    if m is None:
        return None, None
    defs = dict(_LOC_DEF_RE.findall(ttir))
    ref = m.group(1)
    for _ in range(16):
        target = _LOC_FILE_RE.match(ref)
        if target:
            return target["file"], int(target["line"])
        inner = re.search(r"\(?(#loc\d*)\)?\s*$", ref)
        if ref in defs:
            ref = defs[ref]
        elif inner and inner.group(1) in defs:
            ref = defs[inner.group(1)]
        else:
            return None, None
    return None, None


def user_kernel_rewritten(code: str, inductor_name: str, name: str, source: str) -> bool:
    """Does the output code define user kernel `inductor_name` with lines its
    `source` (JITFunction.src) lacks? Inductor rewrites the `tl.store` of a
    user kernel it fused an epilogue into (codegen/triton.py,
    UserDefinedTritonKernel epilogue fusion); nested @jit functions it
    appends are left out of the comparison."""
    m = re.search(rf"^{re.escape(inductor_name)} = async_compile\.triton\('\w+', '''(?P<body>.*?)'''", code, re.M | re.S)
    if m is None or not source:
        return False
    body = m["body"]
    start = body.find(f"def {name}(")
    if start < 0:
        return False
    block = re.split(r"\n(?=@|def )", body[start:])[0]
    original = {line.strip() for line in source.splitlines() if line.strip()}
    return any(line.strip() and line.strip() not in original for line in block.splitlines())
