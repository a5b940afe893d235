"""Progress (tritoninspect/capture/progress.py): stages go to a listener only when one is installed."""

from __future__ import annotations

import io
import itertools

from rich.console import Console

from tritoninspect.capture.progress import listening, stage
from tritoninspect.commands._progress import ProgressDisplay


def piped() -> Console:
    return Console(file=io.StringIO(), force_terminal=False, width=80)


def test_stage_without_listener_is_silent() -> None:
    stage("nobody listens")  # no error, nothing printed


def test_listening_is_scoped() -> None:
    heard: list[str] = []
    with listening(heard.append):
        stage("one")
    stage("two")
    assert heard == ["one"]


def test_piped_display_prints_one_line_per_stage_with_elapsed_time() -> None:
    console = piped()
    ticks = itertools.count(0.0, 1.5)
    with ProgressDisplay(console, "Compiling m.py:Net", clock=lambda: next(ticks)):
        stage("Dynamo: tracing the first call")
        stage("Inductor: compiling 0/0 inference")
    assert console.file.getvalue().splitlines() == [
        "[  1.5 s] Dynamo: tracing the first call",
        "[  3.0 s] Inductor: compiling 0/0 inference",
    ]


def test_quiet_display_prints_nothing() -> None:
    console = piped()
    with ProgressDisplay(console, "t", lines=False):
        stage("x")
    assert console.file.getvalue() == ""


def test_a_failing_listener_never_breaks_the_capture() -> None:
    def boom(message: str) -> None:
        raise RuntimeError(message)

    with listening(boom):
        stage("still fine")


def test_terminal_status_shows_stage_and_elapsed_time() -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=80)
    display = ProgressDisplay(console, "Compiling m.py:Net", clock=itertools.count(0.0, 2.0).__next__)
    display("Inductor: compiling 0/0 inference")
    assert display.__rich__().plain == "Compiling m.py:Net · Inductor: compiling 0/0 inference · 4 s"


def test_quiet_on_a_terminal_shows_no_live_status() -> None:
    """`-q` on a terminal: no spinner either (a newcomer saw it with -q, which promised no progress)."""
    for live, shown in ((True, True), (False, False)):
        console = Console(file=io.StringIO(), force_terminal=True, width=80)
        with ProgressDisplay(console, "Compiling m.py:Net", lines=False, live=live) as display:
            display("Inductor: compiling 0/0 inference")
            assert (display._status is not None) is shown
        assert ("Compiling" in console.file.getvalue()) is shown


def test_warnings_are_counted_and_shown_with_debug() -> None:
    from tritoninspect.capture.progress import warnings_seen

    seen = [("UserWarning", "Graph break: x", "a.py:1")] * 3 + [("UserWarning", "other", "b.py:2")]
    console = piped()
    with ProgressDisplay(console, "t"):
        warnings_seen(seen)
    assert console.file.getvalue().splitlines() == ["torch warned 4 times (2 distinct); --debug shows the warnings"]
    console = piped()
    with ProgressDisplay(console, "t"):
        warnings_seen(seen[-1:])
    assert console.file.getvalue().splitlines() == ["torch warned once; --debug shows the warnings"]
    console = piped()
    with ProgressDisplay(console, "t", debug=True):
        warnings_seen(seen)
    assert console.file.getvalue().splitlines() == ["torch warned (x3): UserWarning: Graph break: x",
                                                    "torch warned: UserWarning: other"]
    console = piped()
    with ProgressDisplay(console, "t", lines=False):
        warnings_seen(seen)
    assert console.file.getvalue() == ""


def test_a_hostile_path_or_warning_in_a_stage_never_reaches_the_terminal_raw() -> None:
    """A target in a folder named with an escape sequence (`mkdir $'\\e[2J'`), a torch warning
    quoting a kernel's name: the stage lines show them without the sequences."""
    console = piped()
    with ProgressDisplay(console, "Compiling \x1b]0;title\x07m.py:Net", debug=True) as display:
        stage("importing /p/\x1b[31mred/m.py and building its inputs")
        display.warnings([("UserWarning", "kernel k\u202eevil\x1b[2J", "m.py:3")])
        assert "\x1b" not in display.title and "\x1b" not in str(display.__rich__())
    shown = console.file.getvalue()
    assert "\x1b" not in shown and "\u202e" not in shown
    assert "importing /p/red/m.py" in shown


def test_a_diff_sides_stage_naming_a_hostile_path_is_shown_clean() -> None:
    from tritoninspect.commands._progress import SidesDisplay

    console = piped()
    with SidesDisplay(console, "Compiling 2 targets", ["A", "B"]) as display:
        display("A", "importing /p/\x1b]8;;http://x\x1b\\m.py\x1b]8;;\x1b\\ and building its inputs")
    shown = console.file.getvalue()
    assert "\x1b" not in shown and "A: importing /p/m.py" in shown
