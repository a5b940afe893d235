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
    preload = next((n.split("LD_PRELOAD=", 1)[1].split(")", 1)[0] for n in aoti.get("notes", []) if "LD_PRELOAD=" in n),
                   None) if aoti else None
    runtime = f" · libstdc++ preloaded: {preload}" if preload else (" · no libstdc++ preloaded" if aoti else "")
    package = (f"package {aoti.get('status')} · loaded={aoti.get('loaded')} · matches eager={aoti.get('matches_eager')}"
               f" (max diff {aoti.get('max_abs_diff')}){runtime}") if aoti else "no package"
    causes = ",".join(f["cause"] for f in info.get("findings", [])) or "-"
    head = f"failed at {failure['stage']} ({failure['message'].splitlines()[0][:160]})" if failure else "exported"
    text = f"{name:<20} {head} · {kernels} · {package} · findings: {causes}"
    if expect == "ok":
        good = failure is None and aoti.get("status") == "built" and aoti.get("loaded") and aoti.get("matches_eager")
    else:
        good = bool(failure) and failure["stage"] == "export" and "raw_launch_non_strict" in causes
    return f"{text} · expect {expect}: {'AS EXPECTED' if good else 'NOT AS EXPECTED'}", good


#: Lines of a failed run's stderr shown under its summary line.
ERR_TAIL = 12


def err_tail(name: str, directory: Path) -> list[str]:
    try:
        lines = [x for x in (directory / f"{name}.err").read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        return ["    (no .err)"]
    return [f"    | {x[:300]}" for x in lines[-ERR_TAIL:]] or ["    (empty .err)"]


def main() -> int:
    directory = Path(sys.argv[1])
    names = [raw.split("|")[:2] for raw in sys.stdin.read().split("\n") if raw.strip()]
    results = [line(name, expect, directory) for name, expect in names]
    for (name, _), (text, good) in zip(names, results):
        print(text)
        if not good:
            print("\n".join(err_tail(name, directory)))
    bad = sum(not good for _, good in results)
    print(f"export: {len(results) - bad} runs as expected" + (f", {bad} NOT" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
