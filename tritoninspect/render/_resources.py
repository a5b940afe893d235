"""The per-kernel resources table (`--resources`): one row per autotune config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from tritoninspect.render._format import NONE
from tritoninspect.render._widgets import ALERT, add_row, table
from tritoninspect.model.report import Kernel

#: Launch options shown in their own columns (or, at their default, not at all).
_OWN_COLUMNS = {"num_warps": None, "num_stages": None, "num_ctas": 1}


def resource_table(kernel: Kernel) -> RenderableType:
    """A "resources" line naming where the numbers come from, then a row per config:
    registers, shared bytes, spills, warps, stages."""
    sources = ", ".join(dict.fromkeys(_source(r.source, r.target) for r in kernel.resources))
    t = table("config", "registers", "shared", "spills", "warps", "stages")
    for r in kernel.resources:
        spills = Text(_num(r.spills), style=ALERT if r.spills else "")
        add_row(t, config_label(r.config), _num(r.registers), _bytes(r.shared), spills, _num(r.num_warps),
                _num(r.num_stages))
    return Group(Text.assemble(("resources", "dim"), f"  {sources}"), t)


def config_label(config: Mapping[str, Any]) -> str:
    """The config's kwargs (and any launch option not shown in a column); "as launched" without autotune."""
    shown = {k: v for k, v in config.items() if not _in_own_column(k, v)}
    return ", ".join(f"{k}={v}" for k, v in shown.items()) or "as launched"


def _in_own_column(name: str, value: Any) -> bool:
    return name in _OWN_COLUMNS and (_OWN_COLUMNS[name] is None or value == _OWN_COLUMNS[name])


def _source(source: str, target: str) -> str:
    return f"gpu ({target})" if source == "gpu" else source


def _num(value: int | None) -> str:
    return NONE if value is None else str(value)


def _bytes(value: int | None) -> str:
    return NONE if value is None else f"{value} B"
