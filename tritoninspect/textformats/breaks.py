"""Graph-break reasons as torch logs them: reason, user location, headline, graph-break id."""

from __future__ import annotations

import re
from typing import Any

from tritoninspect.textformats.origin import is_library_file, is_own_file, is_tool_file, is_user_file

# Graph-break reasons reach us as text. The layouts below are torch's
# (symbolic_convert.py / convert_frame.py / exc.py, 2.11-2.14, read in those
# sources and in real artifacts; PRs for the individual layouts not found); an
# unknown layout degrades to "reason = first line, no location", never to an
# exception.

_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)', re.M)
_BREAK_AT_RE = re.compile(r"^Graph break in user code at (?P<file>.+):(?P<line>\d+)$", re.M)
_WONT_CONVERT_RE = re.compile(r"^WON'T CONVERT (?P<func>\S+) (?P<file>.+) line (?P<line>\d+)$", re.M)
#: Texts meaning Dynamo gave up on the whole frame and ran it eagerly
#: (convert_frame.py's skip message; exc.py's "Skipping the function ..." for
#: breaks it cannot resume from, e.g. inside try/finally, torch 2.11-2.14).
_SKIP_TEXTS = ("torch.compile will skip tracing the frame", "Skipping the function and falling back to eager")


def parse_graph_break(
    payload: str, traced: tuple[str, ...] = ()
) -> tuple[str, str | None, int | None, tuple[str, ...], bool]:
    """(reason, file, line, user stack, frame skipped) from a
    `dynamo_graph_break_reason` artifact. file:line is the user's own innermost
    frame, also when Dynamo broke inside a library (see `graph_break_details`).
    `traced`: the frames Dynamo was tracing ("file:line in func", outermost first),
    when known: those the payload's traceback lost go back in (`with_traced_frames`)."""
    head, _, _exc = payload.partition("\nTraceback (most recent call last):")
    found = tuple(f"{m['file']}:{m['line']} in {m['func']}" for m in _FRAME_RE.finditer(head))
    stack = tuple(f for f in with_traced_frames(found, traced) if is_user_file(frame_location(f)[0] or ""))
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


def tool_frame(payload: str, traced: tuple[str, ...] = ()) -> str | None:
    """The frame of tritoninspect's own code in a break Dynamo logged ("file:line in func", the
    outermost), or None. Only where Dynamo broke and the frames it was tracing (`traced`) count, not
    the payload's whole traceback: tritoninspect is what called the model, so its frames are there
    for every break. Such a break is Dynamo compiling one of the tool's hooks, never the model's."""
    at = _BREAK_AT_RE.search(payload) or _WONT_CONVERT_RE.search(payload)
    frames = (*traced, f"{at['file']}:{at['line']}") if at else traced
    return next((f for f in frames if is_tool_file(frame_location(f)[0] or "")), None)


def with_traced_frames(stack: tuple[str, ...], traced: tuple[str, ...]) -> tuple[str, ...]:
    """`stack` with the frames of `traced` it lacks put back, each before the next traced frame
    it has (frames compared by file:line; Dynamo's resume functions named as the function).

    torch writes the traceback through `collapse_resume_frames` (torch/_dynamo/exc.py, ~line 909
    in 2.13, the same in 2.14; since https://github.com/pytorch/pytorch/pull/148401, torch 2.7),
    which keeps only the last of consecutive frames with the same function name, meant for a
    frame and the resume functions Dynamo calls from it. A model's `forward` calling a
    submodule's `forward` (inlined by Dynamo) matches too, and the model's frame, the user's own
    line, is dropped.
    """
    result = list(stack)
    places = [frame_location(f) for f in result]
    for i, frame in enumerate(traced):
        if frame_location(frame) in places:
            continue
        later = [places.index(frame_location(f)) for f in traced[i + 1 :] if frame_location(f) in places]
        at = later[0] if later else len(result)
        loc, _, func = frame.rpartition(" in ")
        result.insert(at, f"{loc} in {original_function(func)}")
        places.insert(at, frame_location(frame))
    return tuple(result)


def with_callers(above: tuple[str, ...], traced: tuple[str, ...], converted: str | None = None) -> tuple[str, ...]:
    """`traced` after the frames that called the traced frame (`above`, outermost first), less each caller
    that the next frame resumes: a `forward` followed, in its file, by Dynamo's resume function
    `torch_dynamo_resume_in_forward_at_27` is the same call, carried on. `converted`: the name of the code
    Dynamo converts (the first traced frame's; torch's collapse renames a resume function's frame to the
    function it resumes, so the traced frame's own name does not tell). Any other caller stays, also a
    `forward` right above another `forward` (a model calling a submodule, or an autograd.Function's)."""
    if not traced:
        return above
    names = [f.rpartition(" in ")[2] for f in above] + [converted or traced[0].rpartition(" in ")[2]]
    files = [frame_location(f)[0] for f in (*above, traced[0])]

    def resumed_next(i: int) -> bool:
        return (_RESUME_RE.match(names[i + 1]) is not None and files[i] == files[i + 1]
                and original_function(names[i]) == original_function(names[i + 1]))

    return tuple(f for i, f in enumerate(above) if not resumed_next(i)) + traced


def frame_location(frame: str) -> tuple[str | None, int | None]:
    """(file, line) of a "file:line in func" frame; (None, None) when it is not one."""
    file, _, line = frame.rsplit(" in ", 1)[0].rpartition(":")
    return (file, int(line)) if file and line.isdigit() else (None, None)


#: Dynamo's resume functions: torch_dynamo_resume_in_forward_at_27 continues `forward`.
_RESUME_RE = re.compile(r"^torch_dynamo_resume_in_(?P<fn>.+?)_at_\d+$")


def original_function(name: str) -> str:
    """`forward` for Dynamo's resume function `torch_dynamo_resume_in_forward_at_55`."""
    m = _RESUME_RE.match(name)
    return m["fn"] if m else name


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


#: Dynamo refusing a compile over a limit (torch/_dynamo/convert_frame.py, gb0039 "Dynamo recompile
#: limit exceeded ... (currently set to 8) ... Limit type: recompile_limit", torch 2.8-2.14; older
#: torch said "cache_size_limit"). PR not found.
_LIMIT_RE = re.compile(r"recompile limit exceeded|cache_size_limit", re.IGNORECASE)


def recompile_limit(fail_reason: str) -> tuple[str, int | None] | None:
    """(limit type, limit) when a `compilation_metrics` failure says a recompile limit
    was hit; None for any other failure."""
    if not _LIMIT_RE.search(fail_reason):
        return None
    kind = re.search(r"Limit type: (\w+)", fail_reason)
    value = re.search(r"currently set to (\d+)", fail_reason)
    return (kind[1] if kind else "recompile_limit"), (int(value[1]) if value else None)


_FAKE_CALL_RE = re.compile(
    r"call_function <(?:built-in )?function (?P<op>[\w.]+)[^>]*>.*: got (?P<exc>\w+)\('(?P<msg>.*)'\)\s*$", re.M)


def failure_summary(fail_type: str, fail_reason: str) -> tuple[str, str]:
    """(exception type, one line) for a failed compile's `fail_type` / `fail_reason`
    (compilation_metrics). An op that failed on fake tensors gives the innermost exception,
    "RuntimeError", "matmul: a and b must have same reduction dim, ...", as a live capture
    words it (Dynamo's TorchRuntimeError wrapper removed); else the type and the reason's first line."""
    match = _FAKE_CALL_RE.search(fail_reason)
    if match:
        return match["exc"], f"{match['op']}: {match['msg']}"
    lines = [line.strip() for line in fail_reason.strip().splitlines() if line.strip()]
    return fail_type.rsplit(".", 1)[-1], lines[0] if lines else ""


_PREFIX_RE = re.compile(r"^(?P<cid>\d+/\d+): ")


def replaced_compile(compile_id: str, reason: str) -> str | None:
    """The compile a recompile (`compile_id`, with Dynamo's `recompile_reason`) replaced: the one its
    reason's first line names ("0/1: tensor 'x' size mismatch ..."), else the frame's compile before it."""
    first = next((line for line in reason.splitlines() if line.strip()), "")
    prefix = _PREFIX_RE.match(first)
    if prefix:
        return prefix["cid"]
    frame, _, attempt = compile_id.partition("/")
    return f"{frame}/{int(attempt) - 1}" if attempt.isdigit() and int(attempt) > 0 else None
