"""The recording Dynamo backend and the scoped hooks that feed it.

One `Recorder` owns every hook it installs (`installed()` restores them all in
`finally`) and turns what it sees into the plain records of `model/records.py`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import torch

from tritoninspect import textformats
from tritoninspect.capture import compat
from tritoninspect.capture.breaks import break_record, compiled_launch_context, eager_launch_context, tool_break
from tritoninspect.capture.buffers import ArgumentFacts
from tritoninspect.capture.failure import Progress
from tritoninspect.capture.hazards import HazardRecorder
from tritoninspect.capture.kernel_ops import KernelOps
from tritoninspect.capture.patching import Patcher, scoped_env
from tritoninspect.capture.logs import FallbackFilter, LogHandler
from tritoninspect.capture.plain import cpp_hint, first_line, is_tensor_node, kernel_record, op_of, plain, readable, subgraph_name
from tritoninspect.capture.watchers import Watchers
from tritoninspect.model.records import (Capture, FallbackRecord, GraphRecord, LaunchRecord, NodeRecord,
                                        OutputCodeRecord, RecompileLimit, RecompileRecord)
from tritoninspect.capture.resources import LaunchTemplate, hop_template, launch_template
from tritoninspect.capture.progress import stage
from tritoninspect.capture.shapes import record_shapes


class Recorder:
    """A Dynamo backend that records each stage, then hands off to Inductor. `stage` stops the pipeline
    early: "dynamo" runs the Dynamo graph as is, "aot" runs the AOT graphs uncompiled, "inductor" compiles."""

    def __init__(self, stage: str = "inductor", *, compile_only: bool = False, resources: bool = False,
                 cudagraphs: bool = False) -> None:
        self.stage = stage
        self.compile_only = compile_only
        #: --resources: kernel id -> the live kernel and one launch's arguments, to compile
        #: it per config after the run (capture/resources.py); None when not asked for.
        self.launch_templates: dict[str, LaunchTemplate] | None = {} if resources else None
        self.capture = Capture()
        #: Where the capture is: the stage an exception escaped from, the call being made.
        self.progress = Progress()
        self._part = "forward"
        self._launches: Counter[LaunchRecord] = Counter()
        self._code_files: dict[str, str | None] = {}
        #: GraphModules run as is (`--stage dynamo`/`aot`), by id: launches under an fx Interpreter running one.
        self._run_modules: dict[int, tuple[Any, str]] = {}
        self._op_codes: dict[Any, str] = {}
        #: Dynamo frame id -> (function, file, first line), from its compile metrics.
        self._frames: dict[str, tuple[str, Any, Any]] = {}
        #: Kernel id -> the kernel's source, to see whether Inductor rewrote it.
        self._sources: dict[str, str] = {}
        #: The kernels Inductor generated for the graph it is writing code for now.
        self._kernel_ops = KernelOps()
        #: Output-code file -> its part (forward, backward, inference), for launches from it.
        self._code_parts: dict[str, str] = {}
        #: The graph Inductor compiles now; its sub-graphs whose post-grad nodes were recorded.
        self._compiling: torch.fx.GraphModule | None = None
        self._post_grad_subgraphs: set[str] = set()
        #: Issue 24's evidence (capture/hazards.py), CUDA graphs and epilogue fusion (capture/watchers.py);
        #: where kernel arguments come from and how kernel bodies use them (capture/buffers.py).
        self.hazards = HazardRecorder(self.capture, self.kernel)
        self.watchers = Watchers(self.capture, kernel_id=self.kernel, compile_only=compile_only, cudagraphs=cudagraphs)
        self._arg_facts = ArgumentFacts(self._note_once)

    # --- the backend -------------------------------------------------------

    def backend(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        """The function given to `torch.compile(backend=...)`."""
        cid = compat.dynamo.current_compile_id() or "?"
        stage(f"Dynamo: graph {cid} traced; compiling it")
        self._record_graph(gm, cid, "dynamo", "")
        # Timed per compile id: what AOTAutograd and Inductor spent on this graph.
        with self._timed(len(self.capture.graphs) - 1):
            try:
                return self._compile(gm, example_inputs, cid)
            except Exception as exc:
                # Innermost first: Inductor's own failure was noted by _inner_compile.
                self.progress.backend_failed(exc, "aot", cid, "")
                raise
            finally:
                record_shapes(self.capture, gm, cid, self._note_once)

    def _compile(self, gm: torch.fx.GraphModule, example_inputs: list[Any], cid: str) -> Any:
        if self.stage == "dynamo":
            return self._remember_code(gm, cid)
        if self.stage == "aot":
            return compat.inductor.aot_autograd_backend(
                fw_compiler=self._aot_compiler("forward"),
                bw_compiler=self._aot_compiler("backward"),
                inference_compiler=self._aot_compiler("inference"),
            )(gm, example_inputs)
        return self._inductor(gm, example_inputs, cid)

    def _aot_compiler(self, part: str) -> Any:
        def compiler(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
            cid = compat.dynamo.current_compile_id() or "?"
            self._record_graph(gm, cid, f"aot_{part}", part)
            return self._remember_code(gm, cid)

        return compiler

    def _inductor(self, gm: torch.fx.GraphModule, example_inputs: list[Any], cid: str) -> Any:
        if not self.compile_only:
            return compat.inductor.compile_fx(gm, example_inputs, inner_compile=self._inner_compile)
        # TRITON_INTERPRET only around compile_fx: Inductor then skips the
        # GPU precompile of user kernels and loads them for the interpreter.
        # Set before user modules import, it would stop Dynamo seeing kernels.
        with scoped_env("TRITON_INTERPRET", "1"):
            emitted = len(self.capture.output_code)
            try:
                return compat.inductor.compile_fx(gm, example_inputs, inner_compile=self._inner_compile)
            except Exception as exc:  # noqa: BLE001 - fall back, keep going, report it
                if len(self.capture.output_code) == emitted or compat.inductor.kernel_source_failed(exc):
                    raise  # no code yet, or a kernel's generated source fails to load (on a GPU too): not the CPU load
                self.progress.backend_error = None
                self.capture.problems.append(
                    ("inductor", f"[{cid}] Inductor's module could not be loaded in compile-only mode "
                     f"({type(exc).__name__}: {first_line(exc)}); the graph ran uncompiled{cpp_hint(exc)}")
                )
                return self._remember_code(gm, cid)

    def _inner_compile(self, gm: torch.fx.GraphModule, example_inputs: Any, **kwargs: Any) -> Any:
        part = "backward" if kwargs.get("is_backward") else "inference" if kwargs.get("is_inference") else "forward"
        cid = compat.dynamo.current_compile_id() or "?"
        stage(f"Inductor: compiling {cid} {part}")
        self._record_graph(gm, cid, f"aot_{part}", part)
        index = len(self.capture.graphs) - 1
        previous, self._part = self._part, part
        self._compiling, self._post_grad_subgraphs = gm, set()
        try:
            with self._timed(index), self.watchers.around_compile(gm, example_inputs, kwargs, cid, part) as compiled:
                compiled.append(compat.inductor.compile_fx_inner()(gm, example_inputs, **kwargs))
                return compiled[0]
        except Exception as exc:
            self.progress.backend_failed(exc, "inductor", cid, part)
            raise
        finally:
            self._part = previous
            self._compiling = None
            self._record_final(gm, cid, part, index)

    def _record_final(self, gm: torch.fx.GraphModule, cid: str, part: str, index: int) -> None:
        """Record `gm` again as "post_grad_final": Inductor's post-grad passes (re-inplacing, then the
        functional HOP decomposed into clones + the mutation HOP) rewrite it in place, after our
        "post_grad" snapshot. Only when those passes ran (a "post_grad" graph was recorded since)."""
        if not any(g.stage == "post_grad" and (g.compile_id, g.part) == (cid, part) for g in self.capture.graphs[index:]):
            return
        try:
            self._record_graph(gm, cid, "post_grad_final", part)
        except Exception as exc:  # noqa: BLE001 - called in a finally: never mask the compile's own error
            self.capture.problems.append(
                ("post_grad_final", f"[{cid}] the final post-grad graph could not be recorded "
                 f"({type(exc).__name__}: {first_line(exc)})")
            )

    @contextlib.contextmanager
    def _timed(self, index: int) -> Iterator[None]:
        """Record the block's wall time as graph `index`'s compile time, even when it raises."""
        start = time.perf_counter()
        try:
            yield
        finally:
            graph = self.capture.graphs[index]
            self.capture.graphs[index] = dataclasses.replace(graph, compile_time_s=time.perf_counter() - start)

    def _record_post_grad(self, graph: torch.fx.Graph) -> None:
        """The post-grad pass hook. Inductor runs the passes on each sub-graph (a torch.cond
        branch, an invoke_subgraph body) before the graph holding it: a sub-graph's nodes are
        recorded under its name, and not again with the graph."""
        cid = compat.dynamo.current_compile_id() or "?"
        gm = graph.owning_module
        if gm is None:
            return
        name = subgraph_name(self._compiling, gm)
        if name:
            for node in gm.graph.nodes:
                self._record_node(node, cid, "post_grad", self._part, name)
            self._post_grad_subgraphs.add(name)
            return
        self._record_graph(gm, cid, "post_grad", self._part, skip=self._post_grad_subgraphs)

    def _remember_code(self, gm: torch.fx.GraphModule, cid: str) -> Any:
        """Run `gm` as is; note its code files to attribute launches to `cid`. Subgraphs count too: an
        autograd.Function's backward runs its traced `bwd_body_0`, so a launch there is the graph's."""
        for _, mod in gm.named_modules():
            if isinstance(mod, torch.fx.GraphModule):
                self._code_files[compat.dynamo.graph_module_code_file(mod)] = cid
                self._run_modules[id(mod)] = (mod, cid)  # the module kept: its id stays its own
        return gm.forward

    # --- graphs -> records ---------------------------------------------------

    def _record_graph(self, gm: torch.fx.GraphModule, cid: str, stage: str, part: str,
                      skip: set[str] | frozenset[str] = frozenset()) -> None:
        subgraphs = tuple(name for name, mod in gm.named_modules() if name and isinstance(mod, torch.fx.GraphModule))
        code = readable(gm)
        op_count = sum(1 for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module"))
        self.capture.graphs.append(GraphRecord(cid, stage, part, code, op_count, subgraphs))
        for name, mod in gm.named_modules():
            if isinstance(mod, torch.fx.GraphModule) and name not in skip:
                for node in mod.graph.nodes:
                    self._record_node(node, cid, stage, part, name)

    def _record_node(self, node: torch.fx.Node, cid: str, stage: str, part: str, subgraph: str) -> None:
        form = compat.hops.hop_form(node)
        if form is not None:
            record = self._hop_record(node, form, cid, stage, part, subgraph)
            self.capture.nodes.append(record)
            self.hazards.on_hop(node, compat.hops.hop_fields(node), record)
            return
        op = compat.library.op_name(node.target) if node.op == "call_function" else None
        if op is None or op.split("::")[0] in textformats.output_code.TORCH_OP_NAMESPACES:
            return
        triton_op = compat.library.is_triton_op(op)
        kernels = [self.kernel(k) for k in compat.library.triton_op_kernels(op)] if triton_op else []
        for kid in kernels or [None]:
            self.capture.nodes.append(
                NodeRecord(cid, stage, part, subgraph, node.name, "op", kid, op, triton_op)
            )

    def _hop_record(self, node: torch.fx.Node, form: str, cid: str, stage: str, part: str, sub: str) -> NodeRecord:
        fields = compat.hops.hop_fields(node)
        kid = self.kernel(compat.hops.side_table_kernel(fields["kernel_idx"]))
        consts = compat.hops.side_table_constants(fields["constant_args_idx"])
        self._remember_hop_launch(kid, fields, consts)
        values = {k: plain(v) for k, v in {**fields["kwargs"], **consts}.items() if not is_tensor_node(v)}
        declared = set(self.capture.kernels[kid].constexpr_params) if kid else set()
        constexprs = {k: v for k, v in values.items() if k in declared}
        scalars = {k: v for k, v in values.items() if k not in declared}
        op = self._hop_op(node, kid, cid, stage, part, sub)
        to_clone = fields["tensors_to_clone"]
        infos = ((k, compat.hops.tensor_info(v)) for k, v in fields["kwargs"].items())
        tensors = {k: info for k, info in infos if info}
        nodes = {k: v for k, v in fields["kwargs"].items() if k in tensors and isinstance(v, torch.fx.Node)}
        return NodeRecord(
            cid, stage, part, sub, node.name, form, kid, op, bool(op and compat.library.is_triton_op(op)),
            grid=tuple(tuple(plain(g) for g in grid) for grid in fields["grid"]),
            constexprs=constexprs,
            scalars=scalars,
            tensors_to_clone=tuple(to_clone) if to_clone is not None else None,
            tensor_types={k: t for k, (t, _) in tensors.items()},
            tensor_bytes={k: b for k, (_, b) in tensors.items()},
            inductor_clones=compat.inductor.cloned_args(node) if stage == "post_grad_final" else None,
            recompute=part == "backward" and compat.inductor.is_recomputed(node),
            source=compat.dynamo.node_user_line(node),
            buffers=self._arg_facts.buffers(node, nodes, cid) if form == "functional" or stage == "dynamo" else None,
            uses=self._arg_facts.uses(kid, tensors),
        )

    def _hop_op(self, node: torch.fx.Node, kid: str | None, cid: str, stage: str, part: str, sub: str) -> str | None:
        """The op the node's kernel was reached through: the innermost triton_op whose decomposition
        made the node, else what node meta names (the op the graph called; for a backward node, the op
        whose registered backward it is). Inductor's decomposition of the functional HOP
        (post_grad_final) drops our note: there the same kernel's n-th functional node before it says."""
        noted = compat.library.decomposed_from(node)
        if noted is None and stage == "post_grad_final":
            twin = self._post_grad_twin(kid, cid, part, sub)
            if twin is not None:
                return twin.op
        return noted or compat.library.source_fn_op(node)

    def _post_grad_twin(self, kid: str | None, cid: str, part: str, sub: str) -> NodeRecord | None:
        """The functional node in the "post_grad" snapshot that the next
        post_grad_final node of kernel `kid` in sub-graph `sub` replaced (Inductor keeps their order)."""
        def mine(stage: str) -> list[NodeRecord]:
            return [n for n in self.capture.nodes
                    if (n.compile_id, n.part, n.stage, n.kernel_id, n.subgraph) == (cid, part, stage, kid, sub)]

        done = len(mine("post_grad_final"))
        before = [n for n in mine("post_grad") if n.form == "functional"]
        return before[done] if done < len(before) else None

    def _remember_hop_launch(self, kid: str | None, fields: dict[str, Any], consts: dict[str, Any]) -> None:
        templates = self.launch_templates
        if templates is None or kid is None or not (kid not in templates or templates[kid].from_launch):
            return
        kernel = compat.hops.side_table_kernel(fields["kernel_idx"])
        template = hop_template(kernel, fields["kwargs"], consts, fields["tma"])
        if template is not None:
            templates[kid] = template

    def _remember_launch(self, kid: str | None, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        templates = self.launch_templates
        if templates is None or kid is None or kid in templates:
            return
        template = launch_template(kernel, args, kwargs)
        if template is not None:
            templates[kid] = template

    def kernel(self, obj: Any) -> str | None:
        """Register the user kernel behind `obj`; return its id."""
        jf = compat.kernels.innermost_jit(obj)
        if jf is None:
            self.capture.problems.append(("kernels", f"not a Triton kernel: {type(obj).__name__}"))
            return None
        kid = compat.kernels.kernel_id(jf)
        if kid not in self.capture.kernels:
            launched = compat.kernels.launched_object(jf, obj)
            self.capture.kernels[kid] = kernel_record(jf, kid, launched)
            self._sources[kid] = getattr(jf, "src", "")
            self.hazards.on_kernel(kid, jf, compat.kernels.user_kernel_object(jf, launched))
            self._arg_facts.remember(kid, jf)
        return kid

    # --- hooks -----------------------------------------------------------------

    @contextlib.contextmanager
    def installed(self) -> Iterator[Recorder]:
        """Install every hook for the duration of the block; always undo them."""
        patcher = Patcher()
        scopes = contextlib.ExitStack()
        trace = LogHandler(self._on_trace)
        trace_logger = logging.getLogger(compat.dynamo.TRACE_LOGGER)
        mutation_logger = logging.getLogger(compat.dynamo.MUTATION_LOGGER)
        fallback_filter = FallbackFilter(self._on_fallback)
        try:
            # Note which triton_op each HOP node came from, wherever it was called (nested, from a backward).
            for mapping, key, value in compat.library.decomposition_patches():
                patcher.set_item(mapping, key, value)
            for obj, name, value in [*compat.inductor.config_patches(self._record_post_grad),
                                     *self.hazards.attribute_patches()]:
                patcher.set(obj, name, value)
            # Inductor's hooks only when Inductor runs: importing its graph module alone costs seconds.
            if self.stage == "inductor":
                scopes.enter_context(self.watchers.installed(patcher))
                patcher.set(compat.inductor.graph_lowering_class(), "save_output_code", self._on_output_code)
                for obj, name, value in compat.inductor.kernel_origin_patches(self._on_kernel):
                    patcher.set(obj, name, value)
                for mapping, key, value in self.hazards.item_patches():
                    patcher.set_item(mapping, key, value)
            self._install_launch_hooks(patcher)
            trace_logger.addHandler(trace)
            mutation_logger.addFilter(fallback_filter)
            yield self
        finally:
            trace_logger.removeHandler(trace)
            mutation_logger.removeFilter(fallback_filter)
            patcher.restore()
            scopes.close()
            self._flush_launches()
            self.watchers.finish()

    def _install_launch_hooks(self, patcher: Patcher) -> None:
        from triton.runtime.jit import JITFunction

        jit_run = JITFunction.run
        recorder = self

        def run(kernel: Any, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("warmup", False) or compat.autotune.benchmarking():  # an autotuner's trial runs
                return jit_run(kernel, *args, **kwargs)
            kid = recorder.kernel(kernel)
            recorder._remember_launch(kid, kernel, args, kwargs)
            result = jit_run(kernel, *args, **kwargs)
            # Counted once it ran: a launch whose kernel failed to compile never happened.
            recorder._on_launch("jit", kid, None)
            return result

        # Disabled for Dynamo: if a launch is ever traced (a kernel Dynamo could
        # not turn into a HOP) the break happens here, not deep in triton.
        patcher.set(JITFunction, "run", torch.compiler.disable(run, recursive=True))
        # (compile-only mode interprets eager kernels: no configs to compile ahead)
        for obj, name, value in compat.autotune.autotuner_patches(compile_ahead=not self.compile_only):
            patcher.set(obj, name, value)
        if self.stage != "inductor":
            return
        autotuner_cls = compat.inductor.caching_autotuner_class()
        inductor_run = autotuner_cls.run

        def inductor_launch(autotuner: Any, *args: Any, **kwargs: Any) -> Any:
            result = inductor_run(autotuner, *args, **kwargs)
            if compat.inductor.is_user_kernel_launcher(autotuner):
                launch = recorder._on_launch("inductor", None, compat.inductor.kernel_name(autotuner))
                recorder.hazards.on_inductor_launch(autotuner, args, launch.compile_id)
            return result

        patcher.set(autotuner_cls, "run", inductor_launch)

    # --- hook callbacks ---------------------------------------------------------

    def _on_output_code(self, code: str) -> None:
        cid = compat.dynamo.current_compile_id() or "?"
        part = compat.inductor.output_code_part()
        kernels, externs = textformats.output_code.parse_output_code(code)
        calls = textformats.output_code.parse_code_calls(code, self._take_kernel_ops(cid))
        rewritten = tuple(k.inductor_name for k in kernels if self._rewritten(code, k))
        epilogue_fusion = compat.inductor.epilogue_fusion_user_kernels()
        sites = textformats.output_code.subgraph_call_sites(code)
        self.capture.output_code.append(
            OutputCodeRecord(cid, part, code, kernels, externs, calls, epilogue_fusion, rewritten, sites)
        )

    def _on_kernel(self, kernel_name: str, node_schedule: Any) -> None:
        """Inductor generated `kernel_name` (its call comes next in the code)."""
        try:
            self._kernel_ops.add(kernel_name, compat.inductor.scheduled_origins(node_schedule))
        except Exception as exc:  # noqa: BLE001 - inside Inductor's codegen: never break the compile
            self._kernel_ops.add(kernel_name, ())
            self._note_once("kernel_ops", f"the ops of Inductor kernel {kernel_name} could not be read "
                            f"({type(exc).__name__}: {first_line(exc)}); its output-code comment is used, if any")

    def _take_kernel_ops(self, cid: str) -> dict[str, list[tuple[str, ...]]]:
        """Kernel name -> ATen ops per call for the output code just written."""
        try:
            return self._kernel_ops.take(compat.inductor.extern_readers(), compat.inductor.node_positions())
        except Exception as exc:  # noqa: BLE001 - the code is still recorded; its comments still say something
            self._kernel_ops = KernelOps()
            self._note_once("kernel_ops", f"[{cid}] the ops of Inductor's kernels could not be matched to its graph "
                            f"({type(exc).__name__}: {first_line(exc)}); output-code comments are used, if any")
            return {}

    def _note_once(self, source: str, message: str) -> None:
        if not any(s == source for s, _ in self.capture.problems):
            self.capture.problems.append((source, message))

    def _rewritten(self, code: str, kernel: Any) -> bool:
        """Did Inductor rewrite this user kernel's source (fuse an epilogue in)?"""
        for kid, record in self.capture.kernels.items():
            if (record.name, record.file, record.line) == (kernel.name, kernel.file, kernel.line):
                source = self._sources.get(kid, "")
                return textformats.output_code.user_kernel_rewritten(code, kernel.inductor_name, kernel.name, source)
        return False

    def _on_trace(self, record: logging.LogRecord) -> None:
        name, artifact, body = compat.dynamo.trace_event(record)
        cid = compat.dynamo.trace_compile_id(record) or "?"
        if artifact == "dynamo_graph_break_reason":
            payload = str(getattr(record, "payload", "") or "")
            problem = tool_break(cid, payload)
            if problem is None:
                self.capture.breaks.append(break_record(cid, payload, compat.dynamo.trace_attempt(record)))
            else:  # Dynamo compiled one of our hooks: the tool's break, never the model's
                self.capture.problems.append(problem)
        elif name == "compilation_metrics":
            self._on_compile_metrics(cid, body)
        elif name == "inductor_output_code" and body.get("filename"):
            self._code_files[str(body["filename"])] = cid
            try:  # emitted while Inductor writes the module: V.graph is that graph
                self._code_parts[str(body["filename"])] = compat.inductor.output_code_part()
            except Exception:  # noqa: BLE001 - a launch from it then says no part
                pass

    def _on_compile_metrics(self, cid: str, body: dict[str, Any]) -> None:
        frame = cid.partition("/")[0]
        if body.get("co_name"):
            self._frames[frame] = (str(body["co_name"]), body.get("co_filename"), body.get("co_firstlineno"))
        fail_type, fail_reason = body.get("fail_type"), str(body.get("fail_reason") or "")
        limit = textformats.breaks.recompile_limit(fail_reason) if fail_type else None
        if limit is not None:
            function, file, line = self._frames.get(frame, (None, None, None))
            self.capture.recompile_limits.append(RecompileLimit(cid, *limit, function, file, line))
            return  # refused: no graph, so not a recompile
        if body.get("recompile_reason") and not fail_type:
            self.capture.recompiles.append(RecompileRecord(cid, str(body["recompile_reason"])))
        if fail_type:
            self.progress.compile_failed(cid, str(fail_type), fail_reason)

    def _on_fallback(self, record: logging.LogRecord) -> None:
        kernel = compat.dynamo.kernel_under_mutation_analysis()
        kid = self.kernel(kernel) if kernel is not None else None
        exc = record.exc_info[1] if record.exc_info else None
        cause = f"{type(exc).__name__}: {first_line(exc)}" if exc is not None else record.getMessage()
        file, line = compat.dynamo.mutation_fallback_location(exc)
        self.capture.fallbacks.append(FallbackRecord(compat.dynamo.current_compile_id() or "?", kid, cause, file, line))

    def _on_launch(self, via: str, kernel_id: str | None, inductor_name: str | None) -> LaunchRecord:
        op, in_graph, cid, where = None, False, None, {}
        self._op_codes = compat.library.custom_op_codes(self._op_codes)  # and those registered since, in the run
        for frame in compat.dynamo.frames():
            code = frame.f_code
            if op is None:
                op = op_of(self._op_codes, code)
            if code.co_filename in self._code_files:
                in_graph, cid = True, self._code_files[code.co_filename]
                part = self._code_parts.get(code.co_filename)
                if part is not None:  # an output module: which part, which of its functions, which line
                    where = {"part": part, "function": code.co_name, "line": frame.f_lineno}
                break
            interpreted = self._run_modules.get(id(compat.dynamo.interpreted_module(frame)))
            if interpreted is not None:
                in_graph, cid = True, interpreted[1]
                break
        context = compiled_launch_context(frame) if in_graph else eager_launch_context()
        launch = LaunchRecord(via, kernel_id, inductor_name, op, in_graph, cid, **context, **where)
        self._launches[launch] += 1
        return launch

    def _flush_launches(self) -> None:
        for launch, count in self._launches.items():
            self.capture.launches.append(dataclasses.replace(launch, count=count))
        self._launches.clear()
