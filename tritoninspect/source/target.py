"""Resolve a target spec such as ``model.py:Net`` to a live module and example inputs.

The flow follows fastapi-cli's app discovery: parse the spec into a small
record, work out the import name and the ``sys.path`` entry (walking up out of
packages), import, then resolve the attribute with fix-it messages. Errors are
raised as the typed exceptions of `tritoninspect.model.errors`; nothing here prints.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import os
import sys
import traceback
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from tritoninspect.model.errors import (
    EnvironmentProblem,
    InputsError,
    TargetError,
    UsageError,
    UserCodeError,
    ends_the_run,
)
from tritoninspect.capture.calls import Call, every_input, keywords, with_inputs
from tritoninspect.source.inputs import InputSpec, describe_inputs, make_inputs, parse_inputs
from tritoninspect.source.spec import TargetSpec, parse_spec

__all__ = [
    "InputSpec", "LoadedTarget", "TargetSpec", "describe_inputs", "load_target", "make_inputs", "parse_inputs",
    "parse_spec",
]

#: This tool's package directory (tritoninspect/, above source/).
_PACKAGE_DIR = str(Path(__file__).resolve().parents[1]) + os.sep
_IMPORTLIB_DIR = str(Path(importlib.__file__).resolve().parent) + os.sep


# ------------------------------------------------------------------------- import


def import_target_module(spec: TargetSpec) -> types.ModuleType:
    """Import the spec's module, with its directory first on ``sys.path``.

    The entry stays on ``sys.path``: the model may import siblings lazily while
    it runs. A missing target module is a `TargetError`; anything the user's
    module raises while importing is a `UserCodeError` with their traceback.
    """
    if spec.sys_path_entry is not None:
        _put_on_sys_path(spec.sys_path_entry)
    if spec.path is not None and spec.sys_path_entry is not None:
        _check_name_clash(spec, spec.sys_path_entry)
    # A file created since the last import in this process would otherwise be
    # missed by the path finders' cached directory listings.
    importlib.invalidate_caches()
    # Never leave __pycache__/ next to the user's files.
    dont_write, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        return importlib.import_module(spec.module)
    except ModuleNotFoundError as exc:
        if _is_target_missing(exc, spec.module):
            raise TargetError(
                f"Cannot import {spec.module!r}: {exc}",
                hint="check the spelling, or run from the directory that contains it",
            ) from exc
        raise user_code_error(f"error while importing {spec.display_name}", exc) from exc
    except BaseException as exc:  # a module calling sys.exit() must not end the tool
        if ends_the_run(exc):
            raise
        raise user_code_error(f"error while importing {spec.display_name}", exc) from exc
    finally:
        sys.dont_write_bytecode = dont_write


def _put_on_sys_path(entry: Path) -> None:
    text = str(entry)
    if not sys.path or sys.path[0] != text:
        sys.path.insert(0, text)


def _check_name_clash(spec: TargetSpec, entry: Path) -> None:
    """Refuse when the import name already means a different, loaded module.

    Importing would silently return that module (a user file called
    ``types.py`` would be the standard library's ``types``).
    """
    parts = spec.module.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        loaded = sys.modules.get(name)
        if loaded is None:
            continue
        expected = entry.joinpath(*parts[:depth])
        expected_files = {expected.with_suffix(".py"), expected / "__init__.py"}
        origin = getattr(loaded, "__file__", None)
        if origin is None or Path(origin).resolve() not in expected_files:
            raise TargetError(
                f"Cannot import {spec.display_name} as {name!r}: a different module of that "
                f"name is already loaded from {origin or 'a built-in'}",
                hint=f"rename {expected.name} so it does not shadow {name!r}",
            )


def _is_target_missing(exc: ModuleNotFoundError, module: str) -> bool:
    """True when the missing module is the target or one of its packages, not a dependency."""
    return exc.name is not None and (module == exc.name or module.startswith(exc.name + "."))


def user_code_error(context: str, exc: BaseException) -> UserCodeError:
    """A `UserCodeError` for ``exc``, raised by the user's code, with their traceback only."""
    lines = str(exc).strip().splitlines()
    summary = type(exc).__name__ + (f": {lines[0]}" if lines else "")
    return UserCodeError(f"{context}: {summary}", user_traceback=format_user_traceback(exc))


def format_user_traceback(exc: BaseException) -> str:
    """Format ``exc`` without importlib and tritoninspect frames, so the user sees their own."""
    summary = traceback.TracebackException.from_exception(exc)
    _drop_tool_frames(summary, seen=set())
    return "".join(summary.format())


def _drop_tool_frames(summary: traceback.TracebackException, seen: set[int]) -> None:
    # Chained exceptions (raise ... from, or during handling) carry their own stacks.
    if id(summary) in seen:
        return
    seen.add(id(summary))
    kept = [frame for frame in summary.stack if not _is_tool_frame(frame.filename)]
    summary.stack = traceback.StackSummary.from_list(kept)
    for chained in (summary.__cause__, summary.__context__):
        if chained is not None:
            _drop_tool_frames(chained, seen)


def _is_tool_frame(filename: str) -> bool:
    return (
        filename.startswith("<frozen importlib")
        or filename.startswith(_IMPORTLIB_DIR)
        or filename.startswith(_PACKAGE_DIR)
    )


# --------------------------------------------------------------------------- load


@dataclass
class LoadedTarget:
    """A model instance on its device, with the input sets to call it with."""

    spec: TargetSpec
    module: torch.nn.Module
    input_sets: list[tuple[Any, ...]]
    inputs_source: str
    requires_grad: bool


def load_target(spec: TargetSpec, *, inputs: str | None = None, device: str = "cpu") -> LoadedTarget:
    """Import the spec, build the model, find example inputs and move both to ``device``.

    Inputs come from, first found: the ``inputs`` string, an ``example_inputs``
    attribute of the model (its class's staticmethod), or a module-level ``example_inputs()``.
    """
    target_device = _parse_device(device)
    user_module = import_target_module(spec)
    if not spec.attr:
        spec = spec.with_attr(only_module_class(user_module, spec))
    model = _resolve_model(user_module, spec)
    input_sets, source = _find_input_sets(spec, user_module, model, inputs)
    _check_fits_forward(model, input_sets, source)  # before copying inputs to a GPU
    _refuse_meta(model, input_sets, source)
    model, input_sets = _to_device(model, input_sets, target_device)
    requires_grad = any(t.requires_grad for t in _iter_tensors(input_sets)) or any(
        p.requires_grad for p in model.parameters()
    )
    return LoadedTarget(spec, model, input_sets, source, requires_grad)


def only_module_class(user_module: types.ModuleType, spec: TargetSpec) -> str:
    """For ``model.py`` alone: the name of the one nn.Module subclass the file defines.

    Several is a UsageError (exit 2: the command line must name one), listing them on one line.
    None is a TargetError (exit 3: the file is no model's, as docs/commands/index.md says of a wrong
    file), with what else it holds that a NAME could name (an instance, a factory, an imported class).
    """
    found = [name for name, value in vars(user_module).items()
             if isinstance(value, type) and issubclass(value, torch.nn.Module)
             and value.__module__ == user_module.__name__ and not name.startswith("_")]
    if len(found) == 1:
        return found[0]
    file = spec.display_name
    if not found:
        listed = "; ".join(f"{kind.replace(' found', '')}: {', '.join(names)}"
                           for kind, names in _candidates(user_module).items() if names)
        raise TargetError(f"{file} defines no nn.Module subclass; name the model to inspect: {file}:NAME",
                          hint=f"it holds {listed}" if listed else None)
    raise UsageError(f"{file} defines {len(found)} nn.Module subclasses ({', '.join(found)}); "
                     f"name one, e.g. {file}:{found[0]}")


def _resolve_model(user_module: types.ModuleType, spec: TargetSpec) -> torch.nn.Module:
    """The attribute named by the spec, turned into an nn.Module instance."""
    if not hasattr(user_module, spec.attr):
        raise _missing_attr_error(user_module, spec)
    obj = getattr(user_module, spec.attr)
    where = f"{spec.attr!r} in {spec.display_name}"
    if isinstance(obj, torch.nn.Module):  # before callable(): modules are callable
        return obj
    if isinstance(obj, type):
        if not issubclass(obj, torch.nn.Module):
            raise TargetError(f"{where} is a class but not an nn.Module subclass")
        return _call_without_args(obj, spec, what=f"constructing {spec.attr}")
    if callable(obj):
        model = _call_without_args(obj, spec, what=f"calling {spec.attr}()")
        if not isinstance(model, torch.nn.Module):
            returned = type(model).__name__
            raise TargetError(f"{spec.attr}() in {spec.display_name} returned {returned}, not an nn.Module")
        return model
    raise TargetError(
        f"{where} is {type(obj).__name__}, not an nn.Module, an nn.Module subclass or a factory function"
    )


def _call_without_args(obj: Any, spec: TargetSpec, *, what: str) -> Any:
    """Call a class or factory with no arguments; its own exceptions are the user's."""
    try:
        inspect.signature(obj).bind()
    except TypeError:
        able = "constructible" if isinstance(obj, type) else "callable"
        raise TargetError(
            f"{spec.attr} in {spec.display_name} must be {able} with no arguments: "
            f"{spec.attr}{_plain_signature(obj)}",
            hint="give its parameters defaults, or point at a factory function that builds it",
        ) from None
    except ValueError:
        pass  # no introspectable signature (a C extension): just try the call
    try:
        return obj()
    except BaseException as exc:
        if ends_the_run(exc):
            raise
        raise user_code_error(f"error while {what}", exc) from exc


def _missing_attr_error(user_module: types.ModuleType, spec: TargetSpec) -> TargetError:
    """A fix-it message listing what the module does define."""
    found = _candidates(user_module)
    listed = "; ".join(f"{kind}: {', '.join(names)}" for kind, names in found.items() if names)
    names = [name.removesuffix(IMPORTED) for group in found.values() for name in group]
    close = difflib.get_close_matches(spec.attr, names, n=1)
    return TargetError(
        f"No attribute {spec.attr!r} in {spec.display_name}; "
        + (listed or "it defines no nn.Module subclasses, instances or functions"),
        hint=f"did you mean {spec.display_name}:{close[0]}?" if close else None,
    )


#: Said after a model class the file imports rather than defines: a valid target, but maybe not the one meant.
IMPORTED = " (imported)"


def _candidates(user_module: types.ModuleType) -> dict[str, list[str]]:
    """Public models and factories in the module, in definition order."""
    found: dict[str, list[str]] = {"nn.Module subclasses found": [], "instances": [], "functions": []}
    for name, value in vars(user_module).items():
        if name.startswith("_") or name == "example_inputs":
            continue
        if isinstance(value, type) and issubclass(value, torch.nn.Module):
            # torch's own layers imported by name (from torch.nn import Linear) are noise.
            if not value.__module__.startswith("torch."):
                imported = "" if value.__module__ == user_module.__name__ else IMPORTED
                found["nn.Module subclasses found"].append(name + imported)
        elif isinstance(value, torch.nn.Module):
            found["instances"].append(name)
        elif inspect.isfunction(value) and value.__module__ == user_module.__name__:
            found["functions"].append(name)
    return found


def _plain_signature(obj: Any) -> str:
    """``(d_model, n_heads=4)``: the signature without annotations."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    params = [p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()]
    return str(signature.replace(parameters=params, return_annotation=inspect.Signature.empty))


# ------------------------------------------------------------------ example inputs


def _find_input_sets(
    spec: TargetSpec, user_module: types.ModuleType, model: torch.nn.Module, inputs: str | None
) -> tuple[list[tuple[Any, ...]], str]:
    """The input sets and where they came from; the first source found wins."""
    if inputs is not None:
        return [make_inputs(parse_inputs(inputs))], "--inputs"
    class_name = type(model).__name__
    # The model's own inputs first, so one file can hold models with different signatures.
    # getattr_static: only look, so a property that raises is reported as the user's error below.
    if inspect.getattr_static(model, "example_inputs", None) is not None:
        return _call_example_inputs(lambda: model.example_inputs, f"{class_name}.example_inputs", model.forward)
    if hasattr(user_module, "example_inputs"):
        return _call_example_inputs(lambda: user_module.example_inputs, "example_inputs", model.forward)
    raise InputsError(
        f"No example inputs for {class_name}: pass --inputs \"4x128:float16\", define "
        f"example_inputs() in {spec.display_name}, or add an example_inputs staticmethod to {class_name}"
    )


def _call_example_inputs(get: Callable[[], Any], label: str,
                         forward: Callable[..., Any]) -> tuple[list[tuple[Any, ...]], str]:
    """Fetch (and call, when callable) an example_inputs source."""
    try:
        value = get()
        source = f"{label}()" if callable(value) else label
        if callable(value):
            value = value()
    except BaseException as exc:
        if ends_the_run(exc):
            raise
        raise user_code_error(f"error in {label}", exc) from exc
    return _normalise_input_sets(value, source, forward), source


def _normalise_input_sets(value: Any, source: str, forward: Callable[..., Any] | None = None) -> list[tuple[Any, ...]]:
    """A tensor is one input, a tuple/list one call, a list of tuples/lists several calls; a dict one call
    by keyword, a list of dicts several (unless `forward` takes the dicts themselves, as before), a list of
    tuples and dicts several."""
    if isinstance(value, torch.Tensor):
        return [(value,)]
    if isinstance(value, Mapping):
        return [_keyword_call(value, source)]
    if isinstance(value, list) and not value:
        raise InputsError(f"{source} returned an empty list: return a tensor, a tuple, or a list of tuples")
    if isinstance(value, list) and all(isinstance(item, (tuple, list)) for item in value):
        return [tuple(item) for item in value]
    if isinstance(value, list) and all(isinstance(item, Mapping) for item in value) and not _binds(forward, value):
        return [_keyword_call(item, source) for item in value]
    if (isinstance(value, list) and all(isinstance(item, (tuple, list, Mapping)) for item in value)
            and not all(isinstance(item, Mapping) for item in value)):
        # Tuples and dicts mixed: one call each, as a list of tuples is.
        return [_keyword_call(item, source) if isinstance(item, Mapping) else tuple(item) for item in value]
    if isinstance(value, (tuple, list)):
        return [tuple(value)]
    raise InputsError(
        f"{source} returned {type(value).__name__}: return a tensor, a tuple of inputs, a dict of keyword "
        "inputs, or a list of them (one per call)"
    )


def _keyword_call(value: Mapping[Any, Any], source: str) -> Call:
    bad = next((key for key in value if not isinstance(key, str) or not key.isidentifier()), None)
    if bad is not None:
        raise InputsError(f"{source} returned a dict with the key {bad!r}: a dict's keys are the keyword "
                          "names forward is called with")
    return Call((), value)


def _binds(forward: Callable[..., Any] | None, args: list[Any]) -> bool:
    """Can `forward` take `args` positionally? (Unknown: yes, the meaning a list always had.)"""
    try:
        inspect.signature(forward).bind(*args)  # type: ignore[arg-type]
    except TypeError:
        return False
    except ValueError:
        return True
    return True


# ------------------------------------------------------------------------ devices


def _parse_device(device: str) -> torch.device:
    try:
        parsed = torch.device(device)
    except RuntimeError as exc:
        raise TargetError(f"Bad device {device!r}: {exc}") from None
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise EnvironmentProblem(f"device {device!r} asked for, but torch sees no CUDA GPU")
    return parsed


def _refuse_meta(model: torch.nn.Module, input_sets: list[tuple[Any, ...]], source: str) -> None:
    """A meta tensor has a shape and no data: the capture runs the model, and copying one to the device
    was an internal error (exit 6, "Cannot copy out of meta tensor")."""
    if any(t.is_meta for t in _iter_tensors(input_sets)):
        raise InputsError(f"{source} gave a meta tensor (a shape without data): the capture runs the model; "
                          "give tensors with data (torch.randn(..., device=\"cpu\"))")
    name = next((n for n, t in (*model.named_parameters(), *model.named_buffers()) if t.is_meta), None)
    if name is not None:
        raise TargetError(f"{type(model).__name__}.{name} is on the meta device (a shape without data): the "
                          "capture runs the model; build it with real weights (or call to_empty() and initialise them)")


def _to_device(
    model: torch.nn.Module, input_sets: list[tuple[Any, ...]], device: torch.device
) -> tuple[torch.nn.Module, list[tuple[Any, ...]]]:
    """Move the model and every input tensor (nested in lists, tuples, dicts) to ``device``."""
    try:
        model = model.to(device)
    except RuntimeError as exc:
        raise EnvironmentProblem(f"cannot move {type(model).__name__} to {device}: {exc}") from exc
    # One tensor passed twice stays one tensor: aliasing changes what Dynamo guards on.
    moved: dict[int, torch.Tensor] = {}
    return model, [with_inputs(call, (_move(value, device, moved) for value in call),
                               {k: _move(v, device, moved) for k, v in keywords(call).items()})
                   for call in input_sets]


def _move(value: Any, device: torch.device, moved: dict[int, torch.Tensor]) -> Any:
    if isinstance(value, torch.Tensor):
        if id(value) not in moved:
            # A fresh leaf, so a tensor that required grad is still a leaf that does; with the
            # user's mark_dynamic & co. marks, which the copy would otherwise lose.
            copy = value.detach().to(device).requires_grad_(value.requires_grad)
            if type(copy) is not type(value):
                copy = _subclass_as_given(value, device)
            if copy is not value:
                from tritoninspect.capture import compat  # here: importing it costs seconds

                compat.shapes.copy_dim_marks(value, copy)
            moved[id(value)] = copy
        return moved[id(value)]
    if isinstance(value, (list, tuple)):
        return type(value)(_move(item, device, moved) for item in value)
    if isinstance(value, dict):
        return {key: _move(item, device, moved) for key, item in value.items()}
    return value


def _subclass_as_given(value: torch.Tensor, device: torch.device) -> torch.Tensor:
    """A tensor subclass whose `detach()` or `.to()` gives a plain tensor (a wrapper whose
    `__torch_dispatch__` returns unwrapped results) reaches the model as itself: copied, it would be a
    plain tensor, and the graph breaks and guards Dynamo has for the subclass would be missing. It cannot
    be moved to another device without that loss."""
    if value.device == device:
        return value
    raise InputsError(
        f"an example input is a {type(value).__name__} on {value.device} whose detach() and .to() give a plain "
        f"torch.Tensor: moved to {device} it would no longer be a {type(value).__name__}; create it on {device}")


def _iter_tensors(value: Any) -> Iterator[torch.Tensor]:
    """Every tensor in a nest of lists, tuples and dicts."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in every_input(value) if isinstance(value, Call) else value:
            yield from _iter_tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _iter_tensors(item)


# ------------------------------------------------------------------------ forward


def _check_fits_forward(model: torch.nn.Module, input_sets: list[tuple[Any, ...]], source: str) -> None:
    """Raise `InputsError` when a call's inputs cannot bind to ``model.forward``."""
    try:
        signature = inspect.signature(model.forward)
    except (TypeError, ValueError):
        return  # nothing to check against; the call itself will say
    for index, call in enumerate(input_sets):
        try:
            signature.bind(*call, **keywords(call))
        except TypeError as exc:
            which = f"call {index + 1} of {len(input_sets)}: " if len(input_sets) > 1 else ""
            count = f"{len(call)} input" + ("" if len(call) == 1 else "s")
            if keywords(call):
                count = f"keyword inputs {', '.join(keywords(call))}" if not call else \
                    f"{count} and keyword inputs {', '.join(keywords(call))}"
            raise InputsError(
                f"inputs do not fit {type(model).__name__}.forward{_plain_signature(model.forward)}: "
                f"{which}got {count} (from {source})",
                hint=str(exc),
            ) from None
