"""Parse a target spec such as ``model.py:Net`` into a `TargetSpec`, without importing
torch: a mistyped target fails in a fraction of a second, before the heavy imports.

(`tritoninspect.source.target` imports the module and builds the inputs.)
"""

from __future__ import annotations

import dataclasses
import keyword
import re
from dataclasses import dataclass
from pathlib import Path

from tritoninspect.model.errors import TargetError

SPEC_FORMS = 'expected "path/to/model.py:Net" or "package.module:Net"'
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


@dataclass(frozen=True)
class TargetSpec:
    """A parsed target spec: where the module is and which attribute to use."""

    #: As given (`model.py` alone: with the attribute once found, see `with_attr`).
    text: str
    path: Path | None
    module: str
    #: "" for ``model.py`` alone: the only nn.Module subclass the file defines (found on load).
    attr: str
    sys_path_entry: Path | None

    @property
    def display_name(self) -> str:
        """The file as typed (``model.py``), or the dotted module name."""
        if self.path is None:
            return self.module
        return self.text.rpartition(":")[0] if self.attr else self.text

    @property
    def name(self) -> str:
        """``model.py:Net``; just ``model.py`` while the attribute is still to be found."""
        return f"{self.display_name}:{self.attr}" if self.attr else self.display_name

    @property
    def files(self) -> tuple[Path, ...]:
        """What loading it reads: the model's file (none for a dotted name, found on `sys.path`)."""
        return (self.path,) if self.path is not None else ()

    def with_attr(self, attr: str) -> TargetSpec:
        """This spec with the attribute found for ``model.py`` alone."""
        return dataclasses.replace(self, text=f"{self.display_name}:{attr}", attr=attr)


def parse_spec(text: str) -> TargetSpec:
    """Parse ``path/to/model.py:Net``, ``path/to/model.py`` or ``package.module:Net`` into a `TargetSpec`.

    A file inside packages (directories with ``__init__.py``) is imported by
    its dotted name from the outermost package, so its relative imports work.
    """
    target, attr = _split_spec(text)
    if looks_like_path(target):
        return _spec_from_path(text, target, attr)
    return _spec_from_dotted(text, target, attr)


def _split_spec(text: str) -> tuple[str, str]:
    target, colon, attr = text.strip().rpartition(":")
    if not colon and text.strip().endswith(".py"):
        return text.strip(), ""  # model.py alone: its only nn.Module, found when it is imported
    if not colon and not text.strip():
        raise _bad_spec(text, "empty target")  # not the current folder's trace logs: Path("") is "."
    if not colon:
        raise not_a_target(text) or _bad_spec(text, "no ':' between module and attribute")
    if ":" in target and not _WINDOWS_DRIVE.match(target):
        raise _bad_spec(text, "more than one ':'")
    if not target or not attr:
        raise _bad_spec(text, "empty module or attribute")
    if not is_identifier(attr):
        raise _bad_spec(text, f"{attr!r} is not a Python identifier")
    return target, attr


def looks_like_path(target: str) -> bool:
    """A file or folder (`model.py`, `pkg/model`), not a dotted module name."""
    return target.endswith(".py") or "/" in target or "\\" in target


def _spec_from_path(raw: str, target: str, attr: str) -> TargetSpec:
    try:
        path = Path(target).expanduser().resolve()
    except (RuntimeError, OSError) as exc:  # a symlink loop (RuntimeError before Python 3.13, OSError after)
        raise TargetError(f"Cannot resolve {target}: {exc}") from exc
    if not path.exists():
        raise TargetError(f"No such file: {target}")
    if path.is_dir() and not (path / "__init__.py").is_file():
        raise TargetError(f"Not a Python file or package: {target}", hint=SPEC_FORMS)
    if path.is_file() and path.suffix != ".py":
        raise TargetError(f"Not a Python file: {target}", hint=SPEC_FORMS)
    module, entry = _module_name_for(path)
    for part in module.split("."):
        if not is_identifier(part):
            raise TargetError(
                f"Cannot import {target}: {part!r} is not a valid module name",
                hint="rename it to a Python identifier (letters, digits, underscores)",
            )
    return TargetSpec(text=raw, path=path, module=module, attr=attr, sys_path_entry=entry)


def _module_name_for(path: Path) -> tuple[str, Path]:
    """Dotted name and sys.path entry for a file, walking up through packages."""
    module_path = path.parent if path.name == "__init__.py" else path
    parts = [module_path.stem if module_path.is_file() else module_path.name]
    root = module_path.parent
    # As fastapi-cli does: every enclosing directory with an __init__.py is a
    # package, so the import name starts at the outermost one.
    while (root / "__init__.py").is_file() and root != root.parent:
        parts.insert(0, root.name)
        root = root.parent
    return ".".join(parts), root


def _spec_from_dotted(raw: str, target: str, attr: str) -> TargetSpec:
    if not all(is_identifier(part) for part in target.split(".")):
        raise _bad_spec(raw, f"{target!r} is not a dotted module name")
    # Like `python -m` and uvicorn, look in the current directory first: the
    # console script's own sys.path[0] is its bin directory, not the project.
    return TargetSpec(text=raw, path=None, module=target, attr=attr, sys_path_entry=Path.cwd())


def is_identifier(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


def _bad_spec(text: str, reason: str) -> TargetError:
    return TargetError(f"Bad target {text!r} ({reason}): {SPEC_FORMS}")


_FORMS = "a model (path/to/model.py:Net), a saved report (.json), or a TORCH_TRACE log or folder"


def not_a_target(text: str) -> TargetError | None:
    """What `text` is when it is no target spec but names something else (a folder without trace logs, a log that does not exist): a clearer error than the spec's."""
    path = Path(text)
    if text.endswith((".log", ".log.gz")) and not path.exists():
        return TargetError(f"{text}: no such file")
    if not path.is_dir() or (path / "__init__.py").is_file():
        return None
    logs = [p for p in path.iterdir() if p.name.endswith((".log", ".log.gz"))]
    jsons = sorted((p for p in path.iterdir() if p.name.endswith(".json")), key=lambda p: p.name)
    reports = [p.name for p in jsons if _saved_report(p)]
    if logs:
        what = (f"found {len(logs)} .log files that are not torch traces" if len(logs) > 1 else
                f"found 1 .log file that is not a torch trace: {logs[0].name}")
    elif reports:
        what = f"it holds {', '.join(reports[:3])}: name a saved report, e.g. {path / reports[0]}"
    elif not any(path.iterdir()):
        what = "the folder is empty"
    elif jsons:
        other = f"{jsons[0].name} is not" if len(jsons) == 1 else f"none of its {len(jsons)} .json files is"
        what = f"no .log files, and {other} a saved tritoninspect report"
    else:
        what = "no .log files, and not a Python package"
    return TargetError(f"no TORCH_TRACE logs in {text} ({what})", hint=f"give {_FORMS}")


def _saved_report(path: Path) -> bool:
    """The file begins as tritoninspect writes its documents (`schema_version`, then the tool's name, in the
    first 2 KiB): a folder's other JSON (a config, `/container_info.json`) is no report to suggest. A FIFO
    or a file that cannot be read is none either (reading one would block or fail)."""
    try:
        if not path.is_file():
            return False
        with path.open("rb") as file:
            head = file.read(2048)
    except OSError:
        return False
    return b'"schema_version"' in head and b'"tritoninspect"' in head
