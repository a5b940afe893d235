"""Example inputs from `--inputs` ("4x128:float16,4x128"): parsed, checked against memory, made
reproducibly, and described back in the same notation for the report."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Any

import torch

from tritoninspect.capture.calls import keywords

from tritoninspect.model.errors import InputsError

_INPUTS_FORMS = ('expected e.g. "4x128:float16,4x128,scalar:i64=8" (dims joined by x, optional :dtype, '
                 'optional =value to fill with)')
#: Seed for tensors made from --inputs, so two runs see the same values.
INPUTS_SEED = 0

# Short names people type; torch itself already knows float, half, double,
# int, long, short, cfloat and cdouble as attributes.
_DTYPE_ALIASES = {
    "fp32": "float32", "f32": "float32",
    "fp16": "float16", "f16": "float16",
    "bf16": "bfloat16",
    "fp64": "float64", "f64": "float64",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8",
}  # fmt: skip
_INTEGER_DTYPES = frozenset(
    getattr(torch, name)
    for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
    if hasattr(torch, name)  # uint16..64 arrived in torch 2.3
)
_SCALAR_DIMS = frozenset({"scalar", "()"})
_DIM = re.compile(r"[0-9]+")

# Trailing separator: "tritoninspect-dump/" must not count as the package.


@dataclass(frozen=True)
class InputSpec:
    """One input tensor asked for on the command line: a shape and a dtype name."""

    shape: tuple[int, ...]
    dtype: str
    #: `=VALUE`: every element is this value (a scalar's value); None: random values.
    value: bool | int | float | None = None

    def __str__(self) -> str:
        text = format_input(self.shape, self.dtype)
        return text if self.value is None else f"{text}={self.value}"


def format_input(shape: tuple[int, ...] | torch.Size, dtype: str | torch.dtype) -> str:
    """Format a shape and dtype the way ``--inputs`` takes them: ``4x128:float16``."""
    dims = "x".join(str(d) for d in shape) if len(shape) else "scalar"
    name = dtype if isinstance(dtype, str) else str(dtype).removeprefix("torch.")
    return f"{dims}:{name}"


def parse_inputs(text: str) -> tuple[InputSpec, ...]:
    """Parse ``4x128:float16,4x128`` into input specs (the dtype defaults to float32)."""
    if not text.strip():
        raise InputsError(f"empty --inputs: {_INPUTS_FORMS}")
    return tuple(_parse_input_entry(entry.strip(), text) for entry in text.split(","))


def _parse_input_entry(entry: str, text: str) -> InputSpec:
    entry, equals, value = entry.partition("=")
    dims, colon, dtype = entry.strip().partition(":")
    if not dims or ":" in dtype or (colon and not dtype) or (equals and not value.strip()):
        raise InputsError(f"bad --inputs entry {entry!r} in {text!r}: {_INPUTS_FORMS}")
    canonical = _canonical_dtype(dtype or "float32")
    filled = _parse_value(value.strip(), canonical, text) if equals else None
    return InputSpec(shape=_parse_dims(dims.strip(), text), dtype=canonical, value=filled)


def _parse_value(value: str, dtype: str, text: str) -> bool | int | float:
    """`=VALUE` as the dtype's kind of number: "8" for ints, "true"/"1" for bool, "0.5" for floats."""
    kind = getattr(torch, dtype)
    try:
        if kind == torch.bool:
            if value.lower() not in ("true", "false", "1", "0"):
                raise ValueError(value)
            return value.lower() in ("true", "1")
        if kind in _INTEGER_DTYPES:
            return _in_range(int(value, 0), kind, dtype, text)
        return float(value)
    except ValueError:
        raise InputsError(f"bad value {value!r} for {dtype} in --inputs {text!r}: {_INPUTS_FORMS}") from None


def _in_range(number: int, kind: torch.dtype, dtype: str, text: str) -> int:
    """`number`, if `dtype` can hold it: torch.full would wrap it silently (uint8 -1 is 255) or overflow."""
    info = torch.iinfo(kind)
    if not info.min <= number <= info.max:
        raise InputsError(f"value {number} does not fit {dtype} ({info.min}..{info.max}) in --inputs {text!r}")
    return number


def _parse_dims(dims: str, text: str) -> tuple[int, ...]:
    if dims.lower() in _SCALAR_DIMS:
        return ()
    parts = [part.strip() for part in dims.lower().split("x")]
    if not all(_DIM.fullmatch(part) for part in parts):
        raise InputsError(f"bad shape {dims!r} in --inputs {text!r}: {_INPUTS_FORMS}")
    try:
        return tuple(int(part) for part in parts)
    except ValueError:  # a dimension of more than 4300 digits (sys.get_int_max_str_digits)
        raise InputsError(f"a dimension of {max(map(len, parts))} digits in --inputs: too large to be a size") from None


def _canonical_dtype(name: str) -> str:
    key = name.strip().lower()
    dtype = getattr(torch, _DTYPE_ALIASES.get(key, key), None)
    if not isinstance(dtype, torch.dtype) or not _can_generate(dtype):
        raise InputsError(
            f"unknown dtype {name!r} in --inputs; use e.g. float32, float16, bfloat16, int64, bool"
        )
    return str(dtype).removeprefix("torch.")


def _can_generate(dtype: torch.dtype) -> bool:
    # Quantized and bit-packed dtypes are torch.dtype too, but random values
    # for them mean nothing.
    return dtype.is_floating_point or dtype.is_complex or dtype == torch.bool or dtype in _INTEGER_DTYPES


def make_inputs(specs: tuple[InputSpec, ...], *, seed: int = INPUTS_SEED) -> tuple[torch.Tensor, ...]:
    """Random CPU tensors for the specs, reproducible and without touching the global RNG.

    Inputs that cannot fit in memory are an InputsError naming the input and the bytes
    asked, before anything is allocated (a too-large allocation can take the machine down).
    """
    _check_fits_in_memory(specs)
    generator = torch.Generator().manual_seed(seed)
    tensors = []
    for index, spec in enumerate(specs, 1):
        try:
            tensors.append(_random_tensor(spec, generator))
        except (RuntimeError, MemoryError) as exc:
            raise InputsError(f"--inputs entry {index} ({spec}): cannot allocate {_bytes_text(_bytes(spec))}: "
                              f"{str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}") from exc
    return tuple(tensors)


def _bytes(spec: InputSpec) -> int:
    """What making the tensor takes at its peak: floats are drawn in float32, then cast."""
    numel = math.prod(spec.shape)
    dtype = getattr(torch, spec.dtype)
    drawn = 4 if dtype.is_floating_point and dtype != torch.float32 else 0
    return numel * (dtype.itemsize + drawn)


def _check_fits_in_memory(specs: tuple[InputSpec, ...]) -> None:
    available = _available_memory()
    if available is None:
        return
    total = 0
    for index, spec in enumerate(specs, 1):
        total += _bytes(spec)
        if total > available:
            so_far = f" ({_bytes_text(total)} with the inputs before it)" if index > 1 else ""
            raise InputsError(
                f"--inputs entry {index} ({spec}) asks for {_bytes_text(_bytes(spec))}{so_far}; "
                f"this machine has {_bytes_text(available)} available",
                hint="use smaller shapes: small inputs show how the kernels enter the compiled graph as well",
            )


def _available_memory() -> int | None:
    """Bytes of memory available now (Linux: MemAvailable; elsewhere the physical memory)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _bytes_text(count: int) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} bytes"


def _random_tensor(spec: InputSpec, generator: torch.Generator) -> torch.Tensor:
    dtype = getattr(torch, spec.dtype)
    if spec.value is not None:
        return torch.full(spec.shape, spec.value, dtype=dtype)
    if dtype.is_complex:
        return torch.randn(spec.shape, generator=generator, dtype=dtype)
    if dtype.is_floating_point:
        # Drawn in float32 and cast, so float8 and friends work and values
        # agree across floating dtypes.
        return torch.randn(spec.shape, generator=generator).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, spec.shape, generator=generator).bool()
    return torch.randint(0, 16, spec.shape, generator=generator).to(dtype)


def describe_inputs(input_sets: list[tuple[Any, ...]] | tuple[tuple[Any, ...], ...]) -> tuple[str, ...]:
    """One short description per input of the first call, e.g. ``("64:float32", "3")``; a keyword input's
    with its name (``"attention_mask=4x128:bool"``)."""
    if not input_sets:
        return ()
    first = input_sets[0]
    return (*(_describe_value(value) for value in first),
            *(f"{name}={_describe_value(value)}" for name, value in keywords(first).items()))


def _describe_value(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return format_input(value.shape, value.dtype) + _marks_text(value) + _subclass_text(value)
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    return type(value).__name__


def _subclass_text(tensor: torch.Tensor) -> str:
    """` (Int8Tensor: qdata 16x32:int8, scale 16:float32)` for a tensor subclass: its class and, for a
    wrapper subclass (torchao's quantized tensors: `__tensor_flatten__`, the protocol torch.compile
    traces them through), the tensors it holds, whose dtypes the compiled code works on. Without it,
    such an input read as a plain float tensor. "" for a plain tensor or an nn.Parameter."""
    cls = type(tensor)
    if cls in (torch.Tensor, torch.nn.Parameter):
        return ""
    inner = _inner_tensors(tensor)
    return f" ({cls.__name__}: {inner})" if inner else f" ({cls.__name__})"


def _inner_tensors(tensor: torch.Tensor) -> str:
    """"qdata 16x32:int8, scale 16:float32": the tensors a wrapper subclass's `__tensor_flatten__` names;
    "" when it has none, or the user's method raises (the class alone is still said)."""
    flatten = getattr(tensor, "__tensor_flatten__", None)
    if flatten is None:
        return ""
    try:
        names = flatten()[0]
        inner = [(name, getattr(tensor, name)) for name in names]
    except Exception:  # noqa: BLE001 - the user's method: describing an input never fails the run
        return ""
    return ", ".join(f"{name} {format_input(t.shape, t.dtype)}" for name, t in inner if isinstance(t, torch.Tensor))


def _marks_text(tensor: torch.Tensor) -> str:
    """` (dim 0 dynamic, dim 1 maybe dynamic)`: the tensor's mark_dynamic & co. marks; "" for none."""
    from tritoninspect.capture import compat

    marks = compat.shapes.dim_marks(tensor)
    return f" ({', '.join(f'dim {dim} {kind}' for dim, kind in marks)})" if marks else ""
