"""TORCH_TRACE logs of real size for the trace benchmark, made from the real logs in tests/fixtures/traces/.

    python benchmarks/make_traces.py OUT [--mib 100] [--ranks 64] [--rank-mib 1.4] [--devices 1]

Writes `OUT/big/dedicated_log_torch_trace_<id>.log` (one log of at least `--mib` MiB: a job
that compiled many frames) and `OUT/ranks/dedicated_log_torch_trace_rank_<r>_<id>.log`
(`--ranks` logs of at least `--rank-mib` MiB each: one job of that many ranks). Nothing is
invented: every line is a line torch wrote in one of the real runs under
tests/fixtures/traces/gpu/ (H200) and tests/fixtures/traces/ranks/ (two gloo ranks), their
compiles renumbered so that each copy is a frame of its own (`frame_id`, and `compile_id`
in `compilation_metrics`, shifted past the ones before; interned stack names `{"str": ...}`
shifted the same way) and, for the ranks, each line's `rank` field set to the log's rank.
Generated at benchmark time (a 100 MiB file is not committed); the same arguments give the
same bytes.

`--devices N`: the job ran N GPUs to a node, rank r on device r % N. The real runs were on
device 0, and torch prints a tensor's device in graph types ("f32[64][1]cuda:0") and output
code (`device(type='cuda', index=0)`, `torch.cuda._DeviceGuard(0)`, `get_raw_stream(0)`): rank r's
lines name its own device instead, and a payload so changed gets the md5 of its new text. With the default 1, every rank's payloads
are the real runs' texts, which ranks of one job share (tritoninspect parses a text once per
process: docs/speed.md); with `--devices 64` no two ranks share a payload that names a device.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "traces"
MIB = 1 << 20

_FRAME_RE = re.compile(r'"frame_id": (\d+)')
_COMPILE_ID_RE = re.compile(r'"compile_id": "(\d+)/')
_STR_RE = re.compile(r'\{"str": \[(.*), (\d+)\]\}$')
_FILENAME_RE = re.compile(r'"filename": (\d+)')
_RANK_RE = re.compile(r'"rank": \d+')
_MD5_RE = re.compile(r'"has_payload": "[0-9a-f]*"')


def real_logs() -> list[Path]:
    """The single-process logs of real GPU runs (sorted: the output is reproducible)."""
    logs = sorted(p for p in (FIXTURES / "gpu").rglob("dedicated_log_torch_trace_*.log") if "_rank_" not in p.name)
    if not logs:
        raise SystemExit(f"no real logs under {FIXTURES / 'gpu'}")
    return logs


class _Renumber:
    """Copies of real logs, each copy's frames shifted past the last. Stack file names are interned once for
    the whole log, as the one process that wrote a long log interns them (torch/_logging/structured.py
    `intern_string`: a name's `{"str": ...}` line is written the first time it is used): a copy's names map to
    the indexes they already have, and only a new name gets a line."""

    def __init__(self) -> None:
        self.frames = 0  # the next free frame id
        self.interned: dict[str, int] = {}  # each name's index in the whole log
        self.written: set[int] = set()  # the indexes whose line is written

    def copy(self, lines: list[str], rank: int | None = None) -> list[str]:
        frames = [int(m) for line in lines if not line.startswith("\t") for m in _FRAME_RE.findall(line)]
        mine = {int(m[2]): m[1] for line in lines if (m := _STR_RE.search(line.rstrip("\n")))}
        f0, out = self.frames, []
        index = {local: self.interned.setdefault(name, len(self.interned)) for local, name in mine.items()}
        for line in lines:
            if not line.startswith("\t"):
                match = _STR_RE.search(line.rstrip("\n"))
                if match:
                    at = index[int(match[2])]
                    if at in self.written:
                        continue  # interned by an earlier copy
                    self.written.add(at)
                    line = line[:match.start()] + f'{{"str": [{match[1]}, {at}]}}\n'
                line = _FRAME_RE.sub(lambda m: f'"frame_id": {int(m[1]) + f0}', line)
                line = _COMPILE_ID_RE.sub(lambda m: f'"compile_id": "{int(m[1]) + f0}/', line)
                line = _FILENAME_RE.sub(lambda m: f'"filename": {index.get(int(m[1]), int(m[1]))}', line)
                if rank is not None:
                    line = _RANK_RE.sub(f'"rank": {rank}', line)
            out.append(line)
        self.frames += max(frames, default=-1) + 1
        return out


def on_device(lines: list[str], device: int) -> list[str]:
    """The lines of a log as a rank on cuda device `device` writes them (the real runs used device 0)."""
    if device == 0:
        return lines
    out: list[str] = []
    i = 0
    while i < len(lines):
        j = i + 1
        while j < len(lines) and lines[j].startswith("\t"):
            j += 1
        payload = [_moved(line, device) for line in lines[i + 1:j]]
        head = _moved(lines[i], device)
        if payload != lines[i + 1:j]:
            text = "\n".join(line[1:].removesuffix("\n") for line in payload)
            head = _MD5_RE.sub(f'"has_payload": "{hashlib.md5(text.encode()).hexdigest()}"', head)
        out += [head, *payload]
        i = j
    return out


#: Where torch writes the device's index (the real runs: 0): graph types, `device(...)` and `DeviceProperties(...)`,
#: and the output code's device guard, `set_device` and stream (torch/_inductor/codegen/wrapper.py).
_DEVICE_FORMS = ("cuda:{}", "type='cuda', index={}", "_DeviceGuard({})", "set_device({})", "get_raw_stream({})")


def _moved(line: str, device: int) -> str:
    for form in _DEVICE_FORMS:
        line = line.replace(form.format(0), form.format(device))
    return line


def write_log(path: Path, sources: list[Path], size: int, rank: int | None = None, device: int = 0) -> int:
    """Copies of `sources` in turn, renumbered, until `path` holds at least `size` bytes; on cuda
    device `device` (`on_device`)."""
    texts = [on_device(s.read_text(encoding="utf-8").splitlines(keepends=True), device) for s in sources]
    renumber, written, i = _Renumber(), 0, 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        while written < size:
            chunk = "".join(renumber.copy(texts[i % len(texts)], rank))
            out.write(chunk)
            written += len(chunk.encode())
            i += 1
    return written


def make(out: Path, mib: float = 100, ranks: int = 64, rank_mib: float = 1.4, devices: int = 1) -> tuple[Path, Path]:
    """(the big log, the folder of ranks) under `out`; the ranks on `devices` GPUs a node (`on_device`)."""
    big = out / "big" / "dedicated_log_torch_trace_big00000.log"
    write_log(big, real_logs(), int(mib * MIB))
    rank_logs = sorted((FIXTURES / "ranks").glob("dedicated_log_torch_trace_rank_*.log"))
    folder = out / "ranks"
    for r in range(ranks):
        # Each rank starts from the real rank log of its parity (rank 1 recompiled, rank 0 did not),
        # then the real single-process logs: ranks of one job differ, as they do in a real one.
        sources = [rank_logs[r % len(rank_logs)], *real_logs()]
        write_log(folder / f"dedicated_log_torch_trace_rank_{r}_{r:08d}.log", sources, int(rank_mib * MIB), rank=r,
                  device=r % devices)
    return big, folder


def small(out: Path, mib: float = 1.4) -> Path:
    """One log of `mib` MiB (the size of a small real job's log)."""
    path = out / "small" / "dedicated_log_torch_trace_small000.log"
    write_log(path, real_logs(), int(mib * MIB))
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--mib", type=float, default=100)
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--rank-mib", type=float, default=1.4)
    parser.add_argument("--devices", type=int, default=1, help="GPUs a node: rank r on cuda device r %% N")
    args = parser.parse_args()
    big, folder = make(args.out, args.mib, args.ranks, args.rank_mib, args.devices)
    path = small(args.out)
    for p in (path, big):
        print(f"{p}: {p.stat().st_size / MIB:.1f} MiB")
    print(f"{folder}: {args.ranks} ranks, {sum(f.stat().st_size for f in folder.iterdir()) / MIB:.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
