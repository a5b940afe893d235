"""One call of the model: its positional inputs and, for a `forward` that takes them, keyword inputs.

`example_inputs()` returning a dict (`{"input_ids": ..., "attention_mask": ...}`, as Hugging Face models
are called) gives calls by keyword. A `Call` is the tuple of positional inputs every input set always was,
with the keyword inputs beside it (`kwargs`): code that knows nothing of keywords goes on reading the tuple,
and the few places that call the model or look at every input (`call_with`, `every_input`) take both.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


class Call(tuple):  # type: ignore[type-arg]
    """Positional inputs (the tuple itself) and keyword inputs (`kwargs`, possibly empty)."""

    kwargs: dict[str, Any]

    def __new__(cls, args: Any = (), kwargs: Mapping[str, Any] | None = None) -> Call:
        call = super().__new__(cls, args)
        call.kwargs = dict(kwargs or {})
        return call

    def __reduce__(self) -> tuple[Any, ...]:
        return Call, (tuple(self), self.kwargs)

    def __repr__(self) -> str:
        return f"Call({tuple(self)!r}, {self.kwargs!r})"


def keywords(call: tuple[Any, ...]) -> dict[str, Any]:
    """The keyword inputs of `call` (a plain tuple has none)."""
    return getattr(call, "kwargs", {})


def call_with(fn: Any, call: tuple[Any, ...]) -> Any:
    """`fn(*call, **keywords(call))`."""
    return fn(*call, **keywords(call))


def every_input(call: tuple[Any, ...]) -> Iterator[Any]:
    """The positional inputs, then the keyword inputs' values."""
    yield from call
    yield from keywords(call).values()


def with_inputs(call: tuple[Any, ...], args: Any, kwargs: Mapping[str, Any] | None = None) -> tuple[Any, ...]:
    """A call like `call` (a `Call` when it is one, or when `kwargs` is given) with other inputs."""
    if isinstance(call, Call) or kwargs:
        return Call(args, keywords(call) if kwargs is None else kwargs)
    return tuple(args)
