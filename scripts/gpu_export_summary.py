"""Summarise scripts/gpu-export's runs: one line per run, then whether each went as expected.

Reads "name|expect|target options" lines on stdin and <dir>/<name>.json; prints the summary.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def line(name: str, expect: str, directory: Path) -> tuple[str, bool]:
    path = directory / f"{name}.json"
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return f"{name:<20} no report ({type(exc).__name__}); see {name}.err", False
    if "error" in report:
        return f"{name:<20} error: {report['error'].get('message', '')[:200]}", False
    info = report.get("export") or {}
    failure = report.get("failure")
    kernels = ", ".join(f"{k['name']}={k['appears_as']}" for k in info.get("kernels", []))
    aoti = info.get("aoti") or {}
    package = (f"package {aoti.get('status')} · loaded={aoti.get('loaded')} · matches eager={aoti.get('matches_eager')}"
               f" (max diff {aoti.get('max_abs_diff')})") if aoti else "no package"
    causes = ",".join(f["cause"] for f in info.get("findings", [])) or "-"
    head = f"failed at {failure['stage']}" if failure else "exported"
    text = f"{name:<20} {head} · {kernels} · {package} · findings: {causes}"
    if expect == "ok":
        good = failure is None and aoti.get("status") == "built" and aoti.get("loaded") and aoti.get("matches_eager")
    else:
        good = bool(failure) and failure["stage"] == "export" and "raw_launch_non_strict" in causes
    return f"{text} · expect {expect}: {'AS EXPECTED' if good else 'NOT AS EXPECTED'}", good


def main() -> int:
    directory = Path(sys.argv[1])
    results = [line(*raw.split("|")[:2], directory) for raw in sys.stdin.read().split("\n") if raw.strip()]
    for text, _ in results:
        print(text)
    bad = sum(not good for _, good in results)
    print(f"export: {len(results) - bad} runs as expected" + (f", {bad} NOT" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
