"""Inductor's output code: the user kernels it defines, the custom ops it calls, what `call()` launches."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from tritoninspect.model.records import ArgRecord, CallRecord, OutputKernel

# The layouts below are torch's (codegen/wrapper.py, 2.11-2.14, read in those
# sources and in real output code; PRs for the individual layouts not found);
# an unknown layout degrades to fewer records, never to an exception.

#: Op namespaces that belong to torch itself, never a user's custom op.
TORCH_OP_NAMESPACES = frozenset(
    {"aten", "prims", "inductor", "higher_order", "_c10d_functional", "c10d_functional", "quantized",
     "_quantized", "profiler", "debugprims", "rngprims", "_dynamo", "_operator"}
)


_USER_KERNEL_RE = re.compile(
    r"^# Original path: (?P<file>.+):(?P<line>\d+)\n(?P<iname>\w+) = async_compile\.triton\('(?P<name>\w+)'",
    re.M,
)
_EXTERN_OP_RE = re.compile(r"\btorch\.ops\.(?P<ns>\w+)\.(?P<op>\w+)\.\w+\(")


def parse_output_code(code: str) -> tuple[tuple[Any, ...], tuple[str, ...]]:
    """User kernels defined in an Inductor output module (with whether they are
    launched) and the custom ops it calls as extern kernels."""
    kernels = tuple(
        OutputKernel(m["iname"], m["name"], m["file"], int(m["line"]), bool(re.search(rf"\b{m['iname']}\.run\(", code)))
        for m in _USER_KERNEL_RE.finditer(code)
    )
    return kernels, custom_ops_called(code)


def custom_ops_called(code: str) -> tuple[str, ...]:
    """The user ops (`ns::op`, no torch namespace) that graph or output code calls, in first-call order."""
    ops: list[str] = []
    for m in _EXTERN_OP_RE.finditer(code):
        name = f"{m['ns']}::{m['op']}"
        if m["ns"] not in TORCH_OP_NAMESPACES and name not in ops:
            ops.append(name)
    return tuple(ops)


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
_RUN_RE = re.compile(r"^\s*(?P<name>\w+)\.run\((?P<args>.*)\)\s*$")
_DIRECT_CALL_RE = re.compile(r"^\s*(?P<name>\w+)\((?P<args>.*)\)\s*$")
_EXTERN_RE = re.compile(
    r"^\s*(?:(?P<out>\w+) = )?(?P<name>extern_kernels\.\w+|torch\.ops\.\w+\.\w+\.\w+|aten\.\w+\.\w+)\((?P<args>.*)\)\s*$"
)
_COPY_METHOD_RE = re.compile(r"^\s*(?P<dst>\w+)\.copy_\((?P<args>.*)\)\s*$")
_ALIAS_RE = re.compile(r"^\s*(?P<new>\w+) = (?:reinterpret_tensor\()?(?P<old>\w+)\b")
_ARGS_UNPACK_RE = re.compile(r"^\s*(?P<names>[\w, ]+?),? = args\s*$")
_BUFFER_NAME_RE = re.compile(r"^(?:buf\d+|arg\d+_\d+|primals_\d+|tangents_\d+)$")


def parse_code_calls(code: str, kernel_ops: Mapping[str, Sequence[tuple[str, ...]]] | None = None,
                     comment_first: bool = False) -> tuple[Any, ...]:
    """The launches and extern calls of an output module's `call()`, in order,
    as `CallRecord`s. `kernel_ops` (Inductor kernel name -> its ATen ops per
    call, in call order, as Inductor recorded them while generating the code)
    gives each Inductor kernel's ops; without an entry, its `Original ATen`
    comment does; without either they are unknown. Never the kernel's name:
    Inductor names a kernel after more ops than it runs. `comment_first`: the comment
    goes before `kernel_ops` (a trace's provenance names post-grad, decomposed ops)."""
    defs = _kernel_defs(code)
    lines = code.splitlines()
    recorded = {name: list(per_call) for name, per_call in (kernel_ops or {}).items()}
    calls = []
    for function, body in _function_bodies(lines):
        storage: dict[str, str] = {}
        pending = None
        for number, line in body:
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
            ops, nodes, source = _launch_ops(kind, pending, recorded.get(name), comment_first)
            calls.append(CallRecord(kind, name, number, args, ops, nodes, source, function))
            pending = None
    return tuple(calls)


#: `def NAME(args):`: a function of the output module that runs graph code. `call` (module level, or
#: `Runner.call(self, args)` as in 2.13 and 2.14.1), and each sub-graph Inductor writes as its own function
#: (codegen/wrapper.py `SubgraphPythonWrapperCodegen.write_launcher_fn_call_get_indent`, torch 2.13 and
#: 2.14.1 read): a `torch.cond` branch (`true_graph_0`), a `while_loop` body or condition, an
#: invoke_subgraph body (`repeated_subgraph0`); `call()` runs them (`# subgraph: NAME` above each call).
_FUNCTION_RE = re.compile(r"^(?P<indent>\s*)def (?P<name>\w+)\((?P<params>[^)]*)\):")
_SUBGRAPH_CALL_RE = re.compile(r"^\s*# subgraph: (?P<name>\w+)\s*$")
#: What each kind of sub-graph function is, by the name torch gives it (the same codegen, 2.13 and 2.14.1).
_SUBGRAPH_KINDS = (
    (re.compile(r"^(true|false)_graph_\d+$"), "torch.cond branch"),
    (re.compile(r"^while_loop_body_graph_\d+$"), "while_loop body"),
    (re.compile(r"^while_loop_cond_graph_\d+$"), "while_loop condition"),
    (re.compile(r"^repeated_subgraph\d+$"), "invoke_subgraph body"),
    (re.compile(r"^partition_\d+$"), "graph partition"),
)


def subgraph_kind(function: str) -> str:
    """What an output-code function is, from its name: "torch.cond branch", "invoke_subgraph body"...;
    "" for `call` and names torch does not give sub-graphs."""
    return next((kind for pattern, kind in _SUBGRAPH_KINDS if pattern.match(function)), "")


def subgraph_call_sites(code: str) -> tuple[tuple[str, str, int], ...]:
    """(sub-graph function, the function calling it, 1-based line) for each place the code calls a
    sub-graph function (the `# subgraph: NAME` comment above the call), in order."""
    sites = []
    for function, body in _function_bodies(code.splitlines()):
        for number, line in body:
            m = _SUBGRAPH_CALL_RE.match(line)
            if m:
                sites.append((m["name"], function, number))
    return tuple(sites)


def _function_bodies(lines: list[str]) -> Iterator[tuple[str, list[tuple[int, str]]]]:
    """(function, [(1-based number, line), ...]) for `call` first, then each sub-graph function in
    the order written."""
    found = []
    for i, line in enumerate(lines):
        m = _FUNCTION_RE.match(line)
        if m and (m["name"] == "call" or (not m["indent"] and m["params"].strip() == "args")):
            found.append((m["name"], i, len(m["indent"])))
    found.sort(key=lambda f: f[0] != "call")  # call() first: its launches keep their indices
    for name, start, indent in found:
        yield name, list(_body(lines, start, indent))


def _body(lines: list[str], start: int, indent: int) -> Iterator[tuple[int, str]]:
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            return
        yield i + 1, line


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


def _launch_ops(kind: str, comment: Any, recorded: list[tuple[str, ...]] | None,
                comment_first: bool = False) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """(ATen ops, source nodes, where the ops come from) of an Inductor kernel's
    call: "inductor" (what Inductor recorded for this call: `recorded`, consumed
    in order), "comment" (its `Original ATen` comment) or "unknown". The comment
    above a user kernel or extern call repeats its neighbour's (seen on torch
    2.11 and 2.13), so only Inductor kernels take it."""
    if kind != "inductor":
        return (), (), ""
    ops = recorded.pop(0) if recorded else ()
    nodes = tuple(n.strip() for n in comment["nodes"].split(",") if n.strip()) if comment is not None else ()
    if ops and not (comment_first and comment is not None and comment["ops"].strip()):
        return ops, nodes, "inductor"
    if comment is not None and comment["ops"].strip():
        return tuple(o.strip().removeprefix("aten.") for o in comment["ops"].split(",") if o.strip()), nodes, "comment"
    return (), nodes, "unknown"


def user_kernel_rewritten(code: str, inductor_name: str, name: str, source: str) -> bool:
    """Does the output code define user kernel `inductor_name` with lines its
    `source` (JITFunction.src) lacks? Inductor rewrites the `tl.store` of a
    user kernel it fused an epilogue into (codegen/triton.py,
    UserDefinedTritonKernel epilogue fusion). Only the kernel's own function is
    compared (`kernel_function`), not what Inductor appends after it."""
    m = re.search(rf"^{re.escape(inductor_name)} = async_compile\.triton\('\w+', '''(?P<body>.*?)'''", code, re.M | re.S)
    if m is None or not source:
        return False
    function = kernel_function(m["body"], (name, inductor_name))
    if function is None:
        return False
    original = {line.strip() for line in source.splitlines() if line.strip()}
    # config.triton.unique_user_kernel_names renames the def to the Inductor name.
    renamed = re.compile(rf"^def {re.escape(inductor_name)}\(")
    lines = (renamed.sub(f"def {name}(", line.strip()) for line in function.splitlines())
    return any(line and line not in original for line in lines)


def kernel_function(literal: str, names: tuple[str, ...]) -> str | None:
    """The text of a user kernel's own `def` (the first of `names` defined), decorators left out,
    in the source Inductor embeds for it (`literal`: the string passed to `async_compile.triton`,
    as written in the output code, escapes included).

    After the kernel's `src` Inductor appends what its body uses (codegen/wrapper.py
    `user_defined_triton_kernel_transitive_closure_source_code`, ~line 327 in torch 2.13, the
    same in 2.14): nested @triton.jit and @triton.constexpr_function sources, module-level int /
    str / bool / `tl.constexpr` globals (`_CASTING_MODE_LLAMA: triton.language.core.constexpr =
    tl.constexpr(0)`) and imports of names taken from triton (`from
    triton.language.extra.libdevice import rsqrt as rsqrt`), an import with no blank line
    before it. So the function ends where Python's parser says. None when the text does not
    parse or defines none of `names`.
    """
    try:
        text = ast.literal_eval(f"'''{literal}'''")
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    found = next((functions[n] for n in names if n in functions), None)
    return None if found is None else ast.get_source_segment(text, found)
