"""Inductor and AOTAutograd: config patches, output-code hooks, launchers, cloned arguments, compile_fx."""

from __future__ import annotations

import functools
import linecache
import sys
from collections.abc import Callable
from typing import Any

import torch

from tritoninspect.capture.compat import hops


def output_code_part() -> str:
    """forward / backward / inference for the graph Inductor is generating.
    torch/_inductor/virtualized.py V.graph (GraphLowering.is_backward/is_inference),
    private, torch 2.11-2.14; PR not found."""
    from torch._inductor.virtualized import V

    graph = V.graph
    if getattr(graph, "is_backward", False):
        return "backward"
    if getattr(graph, "is_inference", False):
        return "inference"
    return "forward"


def config_patches(record_post_grad: Any) -> list[tuple[Any, str, Any]]:
    """(object, attribute, value) triples set for the duration of a capture."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    from tritoninspect.capture.compat import caches

    # Caches that would replay a stage (FX graph, AOTAutograd, Dynamo PGO) are off; kernel
    # binary caches (C++ codecache, precompiled headers, Triton) stay on: see compat/caches.py.
    patches = [
        *caches.stage_cache_patches(),
        # A plain callable here bypasses the FX/AOT caches as well. Added by
        # https://github.com/pytorch/pytorch/pull/108615 (torch 2.2), same to 2.14.
        (inductor_config, "post_grad_custom_post_pass", record_post_grad),
        # Compile the backward with the forward, not at the first .backward()
        # (torch/_functorch/_aot_autograd/graph_compile.py; torch/_functorch/config.py
        # ~line 378 in 2.13, present 2.11-2.14). PR not found.
        (functorch_config, "force_non_lazy_backward_lowering", True),
    ]
    return patches


def graph_lowering_class() -> Any:
    """GraphLowering; its `save_output_code` hook (a no-op meant for tests) is
    called with the wrapper source before the module is loaded (graph.py ~line
    2720 in 2.13; a class attribute, None by default, torch 2.11-2.14). PR not found."""
    from torch._inductor.graph import GraphLowering

    return GraphLowering


def caching_autotuner_class() -> Any:
    # torch/_inductor/runtime/triton_heuristics.py CachingAutotuner, torch 2.11-2.14
    # (`run(self, *args, stream, ...)`); PR not found.
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    return CachingAutotuner


def kernel_name(autotuner: Any) -> str | None:
    # inductor_meta["kernel_name"] (e.g. add_kernel_0), torch 2.11-2.14; PR not found.
    meta = getattr(autotuner, "inductor_meta", None) or {}
    return meta.get("kernel_name")


def is_user_kernel_launcher(autotuner: Any) -> bool:
    """Inductor marks user-defined kernels with custom_kernel=True (user_autotune;
    triton_heuristics.py ~line 438 in 2.13, torch 2.11-2.14). User kernels reached
    Inductor in https://github.com/pytorch/pytorch/pull/111434; PR adding the flag not found."""
    return bool(getattr(autotuner, "custom_kernel", False))


def user_kernel_of_launcher(autotuner: Any) -> Any:
    """The user's JITFunction behind an Inductor launcher of a user kernel, or None.

    The launcher holds Inductor's copy of the kernel (`autotuner.fn`, its `.fn` the Python
    function when loaded for the interpreter), made from the user's `JITFunction.src`
    (wrapper.py `define_user_defined_triton_kernel`, torch 2.11-2.14; PR not found). The
    user's kernel is in Dynamo's side table while the compile is alive: the one of that
    name with that source, else the only one of that name.
    """
    import inspect

    from tritoninspect.capture.compat import hops, kernels

    fn = getattr(autotuner.fn, "fn", autotuner.fn)
    name = getattr(fn, "__name__", None)
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        source = ""
    source = source[source.find("def "):].strip() if "def " in source else ""
    named = {id(jf): jf for jf in map(kernels.innermost_jit, hops.side_table_kernels())
             if jf is not None and jf.fn.__name__ == name}
    same = [jf for jf in named.values() if getattr(jf, "src", "").strip() == source]
    if same:
        return same[0]
    return next(iter(named.values())) if len(named) == 1 else None


def epilogue_fusion_user_kernels() -> bool | None:
    """torch._inductor.config.epilogue_fusion_user_defined_triton_kernel: lets
    Inductor fuse a pointwise epilogue into a user kernel (off by default;
    ir.UserDefinedTritonKernel.can_fuse_epilogue). None where absent.

    Present in 2.13 (config.py ~line 287). User-kernel epilogue fusion came with
    https://github.com/pytorch/pytorch/pull/173662 (Jan 2026), most likely this
    flag too (diff not checked); the first version that has it is not confirmed.
    """
    import torch._inductor.config as inductor_config

    value = getattr(inductor_config, "epilogue_fusion_user_defined_triton_kernel", None)
    return None if value is None else bool(value)


def cloned_args(node: torch.fx.Node) -> dict[str, int | None]:
    """Arguments of a final post-grad `triton_kernel_wrapper_mutation` node that
    Inductor cloned for it -> bytes of the copy.

    Post-grad `decompose_triton_kernel_wrapper_functional` (fx_passes/post_grad.py)
    turns the functional HOP into `clone_preserve_strides` of each argument
    re-inplacing left in `tensors_to_clone`, then the mutation HOP; that clone
    is `as_strided(clone(as_strided(x)))` (torch/_inductor/utils.py, 2.11-2.14).
    A clone the user wrote feeds the kernel directly, without the as_strided.
    Re-inplacing refines `tensors_to_clone` since
    https://github.com/pytorch/pytorch/pull/120829; PR for the decomposition not
    found. https://github.com/pytorch/pytorch/pull/184050 (May 2026) changed this
    clone and was reverted: if it relands, this pattern needs a second look.
    """
    cloned: dict[str, int | None] = {}
    for name, value in dict(node.kwargs.get("kwargs", {})).items():
        if not (isinstance(value, torch.fx.Node) and value.target is torch.ops.aten.as_strided.default):
            continue
        source = value.args[0]
        if isinstance(source, torch.fx.Node) and source.target is torch.ops.aten.clone.default:
            info = hops.tensor_info(source)
            cloned[name] = info[1] if info else None
    return cloned


# --- what each generated kernel computes --------------------------------------------------------
#
# Inductor names a fused kernel after the ATen ops of its IR nodes' `origins` (the FX
# nodes of the post-grad graph that contributed to it; utils.py get_fused_kernel_name)
# and writes the same list as `# ... Original ATen: [...]` above GPU launches
# (get_kernel_metadata). Those origins also hold the node whose lowering created the
# buffer: an opaque op's input copy is made while that op is lowered, so the kernel
# computing `(x + w) * 2` for `custom::softmax_cop` has origins {add, mul,
# softmax_cop} and is named cpp_fused_add_mul_softmax_cop_0 (checked on 2.13). Every
# extern kernel records that node as `fx_node` (ir.ExternKernel.__init__, ~line 6687
# in 2.13), so origins that are the `fx_node` of an extern kernel reading the buffer
# are left out (capture/kernel_ops.py).

_PROVENANCE_HOOK = "set_kernel_post_grad_provenance_tracing"


def kernel_origin_patches(on_kernel: Callable[[str, Any], None]) -> list[tuple[Any, str, Any]]:
    """(module, attribute, value) triples: Inductor's per-kernel provenance call,
    wrapped to also hand `on_kernel(kernel_name, node_schedule)` every kernel it
    generates (read it with `scheduled_origins`), in the order their calls are
    written.

    `codegen_comment` calls `torch._inductor.debug.set_kernel_post_grad_provenance_tracing(
    node_schedule, kernel_name)` for every generated kernel just before its call is
    written, whatever `config.trace.provenance_tracking_level` (the level is checked
    inside since https://github.com/pytorch/pytorch/pull/163378, Sept 2025: torch
    2.11-2.14). codegen/cpp.py and codegen/triton.py import it by name, so each
    module's binding is replaced; they are imported first, so none binds the wrapper
    after the capture. Extern kernels (`is_extern=True`) are not reported. An
    Inductor without the function gives no triples: the capture falls back to the
    output code's comments.
    """
    import importlib

    from torch._inductor import debug

    original = getattr(debug, _PROVENANCE_HOOK, None)
    if original is None:
        return []
    for name in ("torch._inductor.codegen.cpp", "torch._inductor.codegen.triton"):
        try:
            importlib.import_module(name)
        except ImportError:  # a build without that backend: nothing binds the name there
            continue

    def traced(node_schedule: Any, kernel_name: str, is_extern: bool = False, *args: Any, **kwargs: Any) -> Any:
        if not is_extern:
            on_kernel(kernel_name, node_schedule)
        return original(node_schedule, kernel_name, is_extern, *args, **kwargs)

    modules = [m for name, m in list(sys.modules.items()) if name.startswith("torch._inductor") and m is not None]
    return [(m, _PROVENANCE_HOOK, traced) for m in modules if getattr(m, _PROVENANCE_HOOK, None) is original]


def scheduled_origins(node_schedule: Any) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """(buffer, ((FX node, ATen op), ...)) for each IR node a kernel computes: its
    `origins` that carry an `original_aten` (named as the `Original ATen` comment
    names them: utils.py get_kernel_metadata, ~line 994 in 2.13, 2.11-2.14).
    Scheduler nodes: `.get_nodes()` (fused ones hold several), `.node` (the IR
    node, None for the Enable/DisableReduction markers of Triton schedules)."""
    found = []
    for snode in node_schedule if isinstance(node_schedule, (list, tuple)) else ():
        for leaf in snode.get_nodes() if hasattr(snode, "get_nodes") else (snode,):
            node = getattr(leaf, "node", None)
            if node is None or not hasattr(node, "get_name"):
                continue
            origins = ((o.name, _aten_name(o)) for o in getattr(node, "origins", ()))
            found.append((node.get_name(), tuple((fx, op) for fx, op in origins if op)))
    return tuple(found)


def _aten_name(node: Any) -> str | None:
    """aten.add -> "add", copdemo.softmax_cop -> "copdemo.softmax_cop", a HOP -> its name."""
    target = node.meta.get("original_aten") if getattr(node, "op", None) == "call_function" else None
    if isinstance(target, torch._ops.OpOverload):
        name = str(target._overloadpacket)
    elif isinstance(target, torch._ops.HigherOrderOperator):
        name = str(target.name())
    else:
        return None
    return name.removeprefix("aten.")


def extern_readers() -> dict[str, frozenset[str]]:
    """Buffer -> the FX nodes lowered to extern kernels that read it, for the
    graph Inductor is generating now (`V.graph.operations`; `ExternKernel.fx_node`
    and `.inputs`, torch 2.11-2.14, private; PR not found)."""
    from torch._inductor import ir
    from torch._inductor.virtualized import V

    readers: dict[str, set[str]] = {}
    for op in getattr(V.graph, "operations", ()):
        fx_node = getattr(op, "fx_node", None)
        if not isinstance(op, ir.ExternKernel) or fx_node is None:
            continue
        for name in _input_names(op.inputs):
            readers.setdefault(name, set()).add(fx_node.name)
    return {name: frozenset(nodes) for name, nodes in readers.items()}


def _input_names(inputs: Any) -> list[str]:
    names = []
    for value in inputs if isinstance(inputs, (list, tuple)) else (inputs,):
        if isinstance(value, (list, tuple)):
            names += _input_names(value)
            continue
        try:
            names.append(value.get_name())
        except Exception:  # noqa: BLE001 - constants, None, IR without a buffer name
            continue
    return names


def node_positions() -> dict[str, int]:
    """FX node name -> position in the post-grad graph Inductor is generating
    (V.graph.graph), to list a kernel's ops in graph order as Inductor's comment does."""
    from torch._inductor.virtualized import V

    graph = getattr(V.graph, "graph", None)
    return {node.name: i for i, node in enumerate(graph.nodes)} if graph is not None else {}


def compile_fx(gm: torch.fx.GraphModule, example_inputs: Any, inner_compile: Any) -> Any:
    # torch._inductor.compile_fx.compile_fx(..., inner_compile=), torch 2.11-2.14; PR not found.
    from torch._inductor.compile_fx import compile_fx as _compile_fx

    return _compile_fx(gm, example_inputs, inner_compile=inner_compile)


def interpreting_inductor_wrapper() -> tuple[Any, str, Any]:
    """(class, name, value): `torch.compile`'s Inductor backend (`torch._TorchCompileInductorWrapper.
    __call__`, what `torch.compile(model)` and `backend="inductor"` call, torch 2.11-2.14) with
    TRITON_INTERPRET set around it, as the recording backend sets it around `compile_fx`, for a plain
    `torch.compile` made inside compile-only mode (a test of the user's own under the pytest plugin's
    `--tritoninspect-compile-only`). Without it Inductor precompiles user kernels for the CPU device and
    finds no backend ("0 compatible backends for target (cpu)"); with it, it loads them for the
    interpreter, and their launches run there. Patched on the class torch already imported: nothing
    of Inductor is imported for it."""
    from tritoninspect.capture.patching import scoped_env

    wrapper = torch._TorchCompileInductorWrapper
    original = wrapper.__call__

    @functools.wraps(original)
    def call_interpreting(self: Any, *args: Any, **kwargs: Any) -> Any:
        with scoped_env("TRITON_INTERPRET", "1"):
            return original(self, *args, **kwargs)

    return wrapper, "__call__", call_interpreting


def warm_compile_workers() -> None:
    """Start Inductor's compile-worker pool now, while the target is imported and traced.

    torch's own `inductor` backend calls `async_compile.maybe_warm_pool()` on its first call
    (torch/_dynamo/backends/inductor.py: "The AsyncCompile subproc pool can be slow to start, so warm it up
    as early as possible"); the recording backend calls `compile_fx` directly, so the pool was made only at
    the first kernel, and until it answered, kernels compiled one by one in this process (the pool is skipped
    until ready: https://github.com/pytorch/pytorch/pull/133508). `maybe_warm_pool` keeps torch's own
    conditions (TORCH_WARM_POOL=0, one compile thread, no triton: nothing); it computes `torch_key()` (a hash
    of torch's sources, about 0.6 s) for the workers; torch 2.11-2.14."""
    try:
        from torch._inductor.async_compile import maybe_warm_pool
    except ImportError:  # a torch without it warms nothing
        return
    maybe_warm_pool()


def first_compile_jobs(*, gpu: bool) -> list[Callable[[], object]]:
    """The one-off work of a process's first Triton compile that needs nothing of the model, for
    `capture/warmup.py` to run in a thread while the target is imported. Each is cached for the process
    (or on disk) by torch or Triton, so the compile finds it done; none is extra work. The modules the jobs
    use are imported here, by the caller's thread.

    - `triton_key()`: a hash of Triton's sources and libtriton (0.4 s on the CPU VM), `functools.lru_cache`d;
      Inductor's cache keys and Triton's compile call it (torch/_inductor/runtime/triton_compat.py re-exports
      it, torch 2.11-2.14; `async_compile.pre_fork_setup` warms it the same way for forked pools).
    - On a GPU, the compile-worker pool (`warm_compile_workers` above), and Triton's driver helper
      `cuda_utils`, built with gcc into Triton's cache on first use (triton/backends/nvidia/driver.py
      `CudaUtils`, triton 3.6-3.7: a singleton whose `__init__` builds or loads the module; the driver
      itself is not created here: `triton.runtime.driver` creates it without a lock)."""
    from torch._inductor.runtime.triton_compat import HAS_TRITON, triton_key

    jobs: list[Callable[[], object]] = [triton_key] if HAS_TRITON else []
    if gpu:
        import torch._inductor.async_compile  # noqa: F401 - imported here, not in the thread

        jobs.insert(0, warm_compile_workers)
        jobs.append(_cuda_utils_builder())
    return jobs


def _cuda_utils_builder() -> Callable[[], object]:
    try:
        from triton.backends.nvidia.driver import CudaUtils
    except ImportError:  # no NVIDIA backend (a ROCm build): its driver builds what it needs itself
        return lambda: None
    return CudaUtils


def compile_fx_inner() -> Any:
    # torch._inductor.compile_fx.compile_fx_inner, torch 2.11-2.14; PR not found.
    from torch._inductor.compile_fx import compile_fx_inner as inner

    return inner


def aot_autograd_backend(**compilers: Any) -> Any:
    """AOTAutograd with our fw/bw/inference compilers (torch._dynamo.backends.common
    `aot_autograd(fw_compiler=, bw_compiler=, inference_compiler=)`, torch 2.11-2.14;
    PR not found)."""
    from torch._dynamo.backends.common import aot_autograd

    return aot_autograd(**compilers)


def is_recomputed(node: torch.fx.Node) -> bool:
    """A node of a backward graph that recomputes a forward op (activation checkpointing, or the
    partitioner's own choice): the min-cut partitioner tags every joint-graph node
    `meta["partitioner_tag"]` "is_forward" / "is_backward" and copies the node's meta into the
    backward graph when it recomputes it there (torch/_functorch/partitioners.py `_is_fwd_node`,
    torch 2.13 and 2.14.1 read). Only meaningful for nodes of a backward graph."""
    return node.meta.get("partitioner_tag") == "is_forward"


def kernel_source_failed(exc: BaseException) -> bool:
    """Whether `exc` (or an exception it chains) was raised at the top level of a Triton kernel's
    source module, the one Inductor writes for each kernel and loads with `async_compile.triton`:
    generated Python that fails the same way on a GPU (torchao 0.18 passes a `torch.dtype` constexpr,
    which Inductor writes into the kernel's `triton_meta` as `torch.bfloat16` in a module that never
    imports torch: NameError), not the CPU's output module that compile-only mode may fail to load.
    Inductor writes each kernel's source as a module of its own (`async_compile.triton`, torch
    2.11-2.14; PR not found)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        code = tb.tb_frame.f_code if tb is not None else None
        if code is not None and code.co_name == "<module>" and _is_kernel_source(code.co_filename):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _is_kernel_source(path: str) -> bool:
    text = "".join(linecache.getlines(path))
    return "@triton.jit" in text and "async_compile" not in text
