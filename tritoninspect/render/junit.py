"""JUnit XML for CI dashboards: one `testcase` per checked entry (`check --junit-xml PATH`).

The common subset every reader takes (Jenkins, GitLab, GitHub reporter actions, pytest's own
`--junit-xml`): `testsuites` > `testsuite` (tests, failures, errors, time) > `testcase`
(classname, name, file, line, time), a failed entry's `failure` (message: its first line; text:
all of them), an entry that could not be checked an `error`, and the conditions as properties.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from tritoninspect.analyse.check_suite import EntryResult, SuiteResult
from tritoninspect.render._safe import safe_text

#: The test suite's name and each test case's class name.
SUITE = "tritoninspect.check"


def render_junit(suite: SuiteResult) -> str:
    """The whole XML document (UTF-8, declaration first)."""
    # The run's wall time, as pytest's own --junit-xml gives: the entries ran in parallel.
    seconds = suite.seconds if suite.seconds is not None else sum(e.seconds or 0.0 for e in suite.entries)
    root = ET.Element("testsuites", _counts(suite, seconds))
    element = ET.SubElement(root, "testsuite", {"name": SUITE, **_counts(suite, seconds)})
    properties = ET.SubElement(element, "properties")
    ET.SubElement(properties, "property", {"name": "pyproject", "value": _clean(suite.pyproject)})
    for entry in suite.entries:
        _testcase(element, entry)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode")


def _counts(suite: SuiteResult, seconds: float) -> dict[str, str]:
    return {"tests": str(len(suite.entries)), "failures": str(suite.count("fail")),
            "errors": str(suite.count("error")), "skipped": "0", "time": f"{seconds:.3f}"}


def _testcase(parent: ET.Element, entry: EntryResult) -> None:
    attrs = {"classname": SUITE, "name": _clean(entry.name), "file": _clean(entry.file),
             "time": f"{entry.seconds or 0.0:.3f}"}
    if entry.line:
        attrs["line"] = str(entry.line)
    case = ET.SubElement(parent, "testcase", attrs)
    properties = ET.SubElement(case, "properties")
    ET.SubElement(properties, "property", {"name": "target", "value": _clean(entry.target)})
    for condition in entry.result.conditions if entry.result else ():
        ET.SubElement(properties, "property", {"name": "condition", "value": _clean(condition)})
    if entry.status == "pass":
        return
    tag, kind = ("failure", "check") if entry.status == "fail" else ("error", entry.error_kind or "error")
    outcome = ET.SubElement(case, tag, {"message": _clean(entry.failures[0]), "type": kind})
    outcome.text = _clean("\n".join(entry.failures))


def _clean(text: str) -> str:
    """No control character XML 1.0 cannot hold (a kernel name or an exception's text may have one)."""
    return "".join(c if c in "\t\n" or c >= " " else f"\\x{ord(c):02x}" for c in safe_text(text))
