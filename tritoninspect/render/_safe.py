"""Text made safe for a terminal: no escape sequences, no control characters.

Report strings come from the user's code (kernel names, file paths, exception
text), from torch's messages, and from saved reports anyone can edit. Printed as
they are, an ESC sequence could clear the screen (``ESC [2J``), retitle the
window, or plant a hyperlink (OSC 8). Rich markup is already off in every
renderer; this removes what markup escaping does not.

Complete escape sequences (ECMA-48: CSI, OSC/DCS/SOS/PM/APC strings, the short
escapes; 7- and 8-bit forms) are removed; any control character left (C0 but tab
and newline, which layout needs; DEL; C1) is shown escaped as ``\\xNN``, a bidirectional
override or isolate as ``\\uNNNN``.
Torch-free, like the rest of render/.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from typing import Any, TypeVar

__all__ = ["safe_record", "safe_text"]

T = TypeVar("T")

#: Any character that needs work: C0 but tab and newline, DEL, C1, and the bidirectional
#: overrides and isolates that reorder what a terminal shows ("Trojan Source", CVE-2021-42574):
#: a kernel named "k\u202eevil" would print as "klive".
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: parameters, intermediates, final byte
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"  # strings, ended by BEL or ST
    r"|\x1b[ -/]*[0-~]"  # the short escapes (nF, Fp, Fe, Fs)
)


def safe_text(text: str) -> str:
    """`text` without escape sequences and with other control characters escaped
    (tab and newline kept); the same object when there was nothing to do."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(_escaped, _SEQUENCE.sub("", text))


def _escaped(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_record(value: T) -> T:
    """`value` (a report, any record in it, or tuples, lists and dicts of them) with
    `safe_text` applied to every string; the same object when nothing changed."""
    return _safe(value)  # type: ignore[no-any-return]


def _safe(value: Any) -> Any:
    if isinstance(value, str):
        return value if isinstance(value, enum.Enum) else safe_text(value)
    if type(value) in (tuple, list):
        items = [_safe(v) for v in value]
        return value if all(a is b for a, b in zip(items, value)) else type(value)(items)
    if type(value) is dict:
        pairs = [(_safe(k), _safe(v)) for k, v in value.items()]
        return value if all(a is k and b is v for (a, b), (k, v) in zip(pairs, value.items())) else dict(pairs)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for f in dataclasses.fields(value):
            old = getattr(value, f.name)
            new = _safe(old) if f.init else old
            if new is not old:
                changes[f.name] = new
        return dataclasses.replace(value, **changes) if changes else value
    return value
