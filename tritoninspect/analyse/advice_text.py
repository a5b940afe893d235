"""What the advice rules share: impact levels, the torch documentation they link, library words."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from tritoninspect.model.report import Advice, Library, Report

#: Impact levels: the order findings are shown in (highest first).
BROKEN, HIDDEN, EAGER, COPIES, RECOMPILES, INFO = 60, 50, 40, 30, 20, 10

#: torch.library's documentation (custom_op, triton_op, wrap_triton, register_autograd): what
#: advice links to, never a file of this repository.
TRITON_OP_DOC = "https://docs.pytorch.org/docs/stable/library.html"


def library_of(report: Report, name: str | None) -> Library | None:
    """The report's record of the installed distribution `name`."""
    return next((lib for lib in report.libraries if lib.distribution == name), None) if name else None


def upstream(lib: Library | None, name: str | None) -> str:
    """"ask the maintainers of X (URL)": the user-side way to change a library's code."""
    who = lib.distribution if lib else name or "the library"
    where = f" ({lib.url})" if lib and lib.url else ""
    return f"ask the maintainers of {who}{where}"


def join(names: Sequence[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def in_library(report: Report, advice: Advice, owner: str | None) -> Advice:
    """A finding on an installed library's kernel: its action changes that library's code, which is
    its maintainers' to change; the advice says so before the action (Liger's GEGLU backward: "Give
    the kernel an output pointer ..." read as the user's to do)."""
    if owner is None or not advice.action:
        return advice
    lib = library_of(report, owner)
    name = f"{lib.distribution} {lib.version}" if lib else owner
    action = (f"{advice.kernel} is {name}'s code (installed library, not yours), so {upstream(lib, owner)}; "
              f"the change: {advice.action[:1].lower()}{advice.action[1:]}")
    return dataclasses.replace(advice, action=action, library=owner)
