"""Terminal output is safe to print: report strings cannot carry escape sequences or
control characters to the terminal (tritoninspect/render/_safe.py).

The hostile report is tests/gold/report.json with a kernel renamed to an OSC 8 hyperlink
and a screen clear (`ESC [2J`) in every kind of free text; each text view of it, by the
renderers and by the CLI on the saved file, must hold no ESC byte.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from _expect import CliRuns, explain
from tritoninspect.analyse.diff import diff_reports
from tritoninspect.render import TerminalRenderer, render_stage
from tritoninspect.render._safe import safe_record, safe_text
from tritoninspect.analyse.checks import CheckResult
from tritoninspect.render.breaks import render_breaks
from tritoninspect.render.check import render_check
from tritoninspect.render.diff import DiffRenderer
from tritoninspect.render.fusion import render_fusion
from tritoninspect.model.report import Report

GOLD_REPORT = Path(__file__).parent / "gold" / "report.json"
#: A hyperlink to somewhere else around the text "x" (OSC 8, ended by ST).
HYPERLINK = "\x1b]8;;http://evil\x1b\\x\x1b]8;;\x1b\\"
CLEAR = "\x1b[2J"
#: Bytes that must never reach the terminal from report text (ESC, 8-bit CSI and OSC, BEL, CR).
CONTROL_RE = re.compile(r"[\x1b\x9b\x9d\x07\r]")
SGR_RE = re.compile(r"\x1b\[[0-9;]*m")


def hostile_data() -> dict[str, Any]:
    data = json.loads(GOLD_REPORT.read_text(encoding="utf-8"))
    name = data["kernels"][0]["name"]
    data = json.loads(json.dumps(data).replace(name, json.dumps(HYPERLINK)[1:-1]))
    data["meta"]["target"] += CLEAR
    for b in data["graph_breaks"]:
        b["reason"] = CLEAR + b["reason"] + "\r\x07\x9b2J"
        b["file"] += CLEAR
        b["user_stack"] = [f + CLEAR for f in b["user_stack"]]
    for r in data["recompiles"]:
        r["reason"] += CLEAR
    for d in data["diagnostics"]:
        d["message"] = CLEAR + d["message"]
    for g in data["graphs"]:
        g["code"] = g["code"].replace("\n", CLEAR + "\n", 1)
    return data


@pytest.fixture
def hostile() -> Report:
    return Report.from_dict(hostile_data())


def test_safe_text() -> None:
    assert safe_text(HYPERLINK) == "x"
    assert safe_text(f"a{CLEAR}b") == "ab"
    assert safe_text("\x1b[38;5;196mred\x1b[0m") == "red"
    assert safe_text("title\x1b]0;pwned\x07!") == "title!"
    assert safe_text("\x9b2Jx\x9d8;;u\x9cy") == "xy"  # 8-bit CSI and OSC
    # Control characters outside a sequence are shown, escaped; tab and newline stay.
    assert safe_text("a\rb\x00c\x7fd\x85e\x1b") == "a\\x0db\\x00c\\x7fd\\x85e\\x1b"
    assert safe_text("line\n\tindented") == "line\n\tindented"
    # Bidirectional overrides and isolates reorder what the terminal shows (Trojan Source).
    assert safe_text("k\u202eevil\u2066x\u2069") == "k\\u202eevil\\u2066x\\u2069"
    assert safe_text("naïve · 核") == "naïve · 核"
    plain = "add_kernel · samples/add.py:14 — ok"
    assert safe_text(plain) is plain


def test_safe_record_rebuilds_only_what_changed(hostile: Report) -> None:
    clean = Report.from_json(GOLD_REPORT.read_text(encoding="utf-8"))
    assert safe_record(clean) is clean
    safe = safe_record(hostile)
    assert safe.kernels[0].name == "x" and safe.kernels[1] is hostile.kernels[1]
    assert CONTROL_RE.search(safe.to_json()) is None and "\\u001b" not in safe.to_json()
    assert safe.kernels[0].entries == hostile.kernels[0].entries  # enums stay enums


@pytest.mark.parametrize("color", [False, True], ids=["plain", "color"])
def test_every_text_view_is_clean(hostile: Report, color: bool) -> None:
    clean = Report.from_json(GOLD_REPORT.read_text(encoding="utf-8"))
    views = {
        "graph": TerminalRenderer(color=color).render(hostile),
        "breaks": render_breaks(hostile, color=color),
        "fusion": render_fusion(hostile, color=color),
        **{f"show {s}": render_stage(hostile, s, color=color) for s in ("dynamo", "aot", "post-grad", "code")},
        "diff": DiffRenderer(color=color).render(diff_reports(clean, hostile, sources=(f"a{CLEAR}", HYPERLINK))),
    }
    for view, text in views.items():
        # With colour on, Rich's own SGR codes are the only escapes.
        assert CONTROL_RE.search(SGR_RE.sub("", text)) is None, (view, CONTROL_RE.search(SGR_RE.sub("", text)))
    assert "x" in views["graph"] and "evil" not in "".join(views.values())


def test_check_lines_are_clean() -> None:
    assert render_check(CheckResult(f"m.py:{HYPERLINK}", ("--no-breaks",), ())) == "ok: 1 condition holds for m.py:x (--no-breaks)"
    assert render_check(CheckResult("m.py:Net", (), (f"--entry {CLEAR}k=hop: k entered as eager",))) == (
        "FAIL --entry k=hop: k entered as eager"
    )


def test_cli_on_a_hostile_saved_report(tmp_path: Path) -> None:
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(hostile_data()), encoding="utf-8")
    commands = {
        "graph": ["graph", str(path)],
        "breaks": ["breaks", str(path)],
        "show dynamo": ["graph", str(path), "--show", "dynamo"],
        "show fusion": ["graph", str(path), "--show", "fusion"],
        # The "wrote <path>" notes name paths the user typed.
        "-o and --dump named with escapes": ["graph", str(path), "-o", str(tmp_path / "\x1b]0;t\x07r.txt"),
                                             "--dump", str(tmp_path / "\x1b[2Jd")],
    }
    runs = CliRuns(workers=2)
    try:
        for key, args in commands.items():
            runs.submit(key, args)
        for key in commands:
            proc = runs.get(key)
            assert proc.returncode == 0, explain(proc)
            assert "\x1b" not in proc.stdout and "\x1b" not in proc.stderr, key
            assert CONTROL_RE.search(proc.stdout) is None, key
    finally:
        runs.close()
