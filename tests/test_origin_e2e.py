"""Origins end to end (tier c, slow, compile-only): `tritoninspect breaks` on a checkout whose
path has folders named tritoninspect, triton and torch, and on a model whose kernel library
comes from a `pip install --target` directory (no site-packages in its path).

Both are CLI runs in fresh processes, started together.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import _breaks_expect
from _expect import REPO, SAMPLES_DIR, CliRuns, cli_env, json_report, line_of

pytestmark = pytest.mark.slow

ASSETS = Path(__file__).parent / "assets"
LIBRARY = ASSETS / "site-packages" / "tikernlib" / "__init__.py"
BREAK_SAMPLE = "break_pre_hook"  # breaks inside triton/runtime/jit.py: the user's line is found below it


def _install_target(directory: Path) -> Path:
    """What `pip install --target DIR tikernlib` leaves: the package and its dist-info."""
    package = directory / "tikernlib"
    package.mkdir(parents=True)
    shutil.copy(LIBRARY, package / "__init__.py")
    info = directory / "tikernlib-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tikernlib\nVersion: 0.1\n")
    (info / "INSTALLER").write_text("pip\n")
    (info / "RECORD").write_text(
        "tikernlib/__init__.py,,\ntikernlib-0.1.dist-info/METADATA,,\ntikernlib-0.1.dist-info/INSTALLER,,\n"
        "tikernlib-0.1.dist-info/RECORD,,\n"
    )
    return package / "__init__.py"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("origin") / "tritoninspect" / "triton" / "torch"
    proj = root / "proj"
    shutil.copytree(SAMPLES_DIR, proj / "samples")
    shutil.copy(ASSETS / "uses_installed_library.py", proj / "model.py")
    library = _install_target(root / "deps")
    cli = CliRuns(workers=2)
    cpu = ["--json", "--device", "cpu"]
    cli.submit("sample", ["breaks", f"samples/{BREAK_SAMPLE}.py:Net", *cpu], cwd=proj)
    pythonpath = os.pathsep.join([str(REPO), str(root / "deps")])
    cli.submit("library", ["breaks", "model.py:Net", *cpu], cwd=proj, env=cli_env(PYTHONPATH=pythonpath))
    cli.proj, cli.library = proj, library  # type: ignore[attr-defined]
    yield cli
    cli.close()


def test_a_checkout_under_folders_named_like_the_machinery(runs: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every expectation of the sample holds for its copy: the user's line, stack and kernel."""
    report = json_report(runs.get("sample"))
    monkeypatch.setattr(_breaks_expect, "SAMPLES_DIR", runs.proj / "samples")
    _breaks_expect.check_breaks(BREAK_SAMPLE, report)
    copy = runs.proj / "samples" / f"{BREAK_SAMPLE}.py"
    assert all(Path(b["file"]) == copy for b in report["graph_breaks"])


def test_a_library_from_a_pip_install_target_dir(runs: Any) -> None:
    """tikernlib breaks inside itself: the user's line, the library's frame, its kernel."""
    report = json_report(runs.get("library"))
    model, lib = runs.proj / "model.py", runs.library
    user_line = line_of(model, "return tikernlib.scaled(h, factor) + 1")
    lib_line = line_of(lib, "f = float(factor.item())")
    assert report["graph_breaks"]
    for b in report["graph_breaks"]:
        assert (b["file"], b["line"]) == (str(model), user_line)
        assert b["library_frame"] == f"{lib}:{lib_line} in scaled"
        assert b["kernel"] == "lib_scale_kernel" and "in the library" in b["kernel_relation"]
