"""tritoninspect/textformats/origin.py: user code, installed libraries and the machinery, told apart by
where packages are installed (temporary trees; no compile)."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tritoninspect.textformats import origin
from tritoninspect.textformats.origin import Origin, classify, is_library_file, is_own_file, is_user_file, user_tree

PACKAGE_DIR = Path(origin.__file__).resolve().parents[1]  # tritoninspect/


def _write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _dist_info(directory: Path, name: str, files: list[str], *, record: bool = True) -> None:
    """A distribution as `pip install --target DIR` leaves it: files plus NAME-1.0.dist-info."""
    info = directory / f"{name}-1.0.dist-info"
    _write(info / "METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    for file in files:
        _write(directory / file, "x = 1\n")
    if record:
        lines = [f"{f},," for f in [*files, f"{info.name}/METADATA", f"{info.name}/RECORD"]]
        _write(info / "RECORD", "\n".join(lines) + "\n")


@pytest.fixture
def on_sys_path(monkeypatch: pytest.MonkeyPatch) -> object:
    def add(directory: Path) -> None:
        monkeypatch.syspath_prepend(str(directory))

    return add


def test_a_pip_install_target_dir_is_a_library(tmp_path: Path, on_sys_path: object) -> None:
    target = tmp_path / "deps"
    _dist_info(target, "kernlib", ["kernlib/__init__.py", "kernlib/ops.py", "kernmod.py"])
    beside = _write(target / "notes.py")  # not installed by any distribution listed there
    kern = target / "kernlib" / "ops.py"
    assert classify(str(kern)) is Origin.USER  # not on sys.path: just a folder
    on_sys_path(target)  # type: ignore[operator]
    assert classify(str(kern)) is Origin.LIBRARY and classify(str(target / "kernmod.py")) is Origin.LIBRARY
    assert is_user_file(str(kern)) and is_library_file(str(kern)) and not is_own_file(str(kern))
    assert classify(str(beside)) is Origin.USER


def test_a_dist_info_without_a_file_list_makes_its_whole_dir_a_library(tmp_path: Path, on_sys_path: object) -> None:
    target = tmp_path / "deps"
    _dist_info(target, "bare", ["bare/__init__.py"], record=False)
    on_sys_path(target)  # type: ignore[operator]
    assert classify(str(target / "anything.py")) is Origin.LIBRARY


def test_an_egg_info_lists_its_packages_in_top_level_txt(tmp_path: Path, on_sys_path: object) -> None:
    """A checkout installed with `pip install -e .` (setuptools) holds NAME.egg-info; its
    SOURCES.txt lists tests too, which stay the user's."""
    checkout = tmp_path / "proj"
    _write(checkout / "mypkg.egg-info" / "PKG-INFO", "Metadata-Version: 2.1\nName: mypkg\nVersion: 1.0\n")
    _write(checkout / "mypkg.egg-info" / "top_level.txt", "mypkg\n")
    _write(checkout / "mypkg.egg-info" / "SOURCES.txt", "mypkg/__init__.py\ntests/test_a.py\n")
    pkg, test = _write(checkout / "mypkg" / "__init__.py"), _write(checkout / "tests" / "test_a.py")
    on_sys_path(checkout)  # type: ignore[operator]
    assert classify(str(pkg)) is Origin.LIBRARY and classify(str(test)) is Origin.USER
    # Loaded from that checkout, the package is the user's own code.
    with user_tree(checkout):
        assert classify(str(pkg)) is Origin.USER
    # Or from a folder inside it (examples/model.py importing the checkout's package).
    with user_tree(checkout / "examples"):
        assert classify(str(pkg)) is Origin.USER
    with user_tree(tmp_path / "elsewhere"):  # a model elsewhere uses a checkout of someone's library
        assert classify(str(pkg)) is Origin.LIBRARY
    assert classify(str(pkg)) is Origin.LIBRARY


def test_site_packages_layouts(tmp_path: Path) -> None:
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    debian = tmp_path / "usr" / "lib" / "python3" / "dist-packages"
    assert classify(str(site / "kernlib" / "ops.py")) is Origin.LIBRARY
    assert classify(str(debian / "kernlib.py")) is Origin.LIBRARY
    # Another environment's torch or Triton is still torch or Triton.
    assert classify(str(site / "torch" / "nn" / "modules" / "module.py")) is Origin.MACHINERY
    assert classify(str(debian / "triton" / "runtime" / "jit.py")) is Origin.MACHINERY
    # A package named like a site dir is not one: only whole components count.
    assert classify(str(tmp_path / "my-site-packages-notes" / "model.py")) is Origin.USER


def test_a_venv_inside_the_checkout_is_a_library(tmp_path: Path) -> None:
    """The README's `.venv` inside the checkout: the deepest root decides."""
    checkout = tmp_path / "checkout"
    installed = checkout / ".venv" / "lib" / "python3.11" / "site-packages" / "kernlib" / "ops.py"
    model = checkout / "model.py"
    with user_tree(checkout):
        assert classify(str(installed)) is Origin.LIBRARY and classify(str(model)) is Origin.USER


def test_a_target_inside_a_site_dir_is_the_users(tmp_path: Path) -> None:
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    model = site / "mymodels" / "net.py"
    assert classify(str(model)) is Origin.LIBRARY
    with user_tree(model.parent):
        assert classify(str(model)) is Origin.USER
        assert classify(str(site / "other" / "x.py")) is Origin.LIBRARY


def test_user_trees_named_like_the_machinery(tmp_path: Path) -> None:
    """Folders named tritoninspect, triton or torch are the user's: only the real package roots count."""
    proj = tmp_path / "tritoninspect" / "triton" / "torch" / "proj"
    mylib = tmp_path / "mylib" / "triton" / "kern.py"
    for path in (proj / "model.py", proj / "tritoninspect" / "cli.py", mylib, tmp_path / "bin" / "tritoninspect"):
        assert classify(str(path)) is Origin.USER, path
        assert is_own_file(str(path)) and is_user_file(str(path)) and not is_library_file(str(path))
    with user_tree(proj):
        assert classify(str(proj / "model.py")) is Origin.USER


def test_the_machinery_by_its_package_roots() -> None:
    import importlib

    assert classify(str(PACKAGE_DIR / "cli.py")) is Origin.MACHINERY
    # A sibling folder is not the package.
    assert classify(str(PACKAGE_DIR.parent / "tritoninspect-dump" / "x.py")) is Origin.USER
    assert classify(importlib.__file__) is Origin.MACHINERY
    assert classify(os.path.join(sysconfig.get_paths()["scripts"], "tritoninspect")) is Origin.MACHINERY
    for pseudo in ("<frozen importlib._bootstrap>", "<string>", ""):
        assert classify(pseudo) is Origin.MACHINERY and not is_user_file(pseudo)


def test_torch_and_triton_are_found_without_importing_them() -> None:
    code = (
        "import sys, importlib.util, os\n"
        "from tritoninspect.textformats.origin import classify\n"
        "for name in ('torch', 'triton'):\n"
        "    root = importlib.util.find_spec(name).submodule_search_locations[0]\n"
        "    print(name, classify(os.path.join(root, 'x.py')).value)\n"
        "print('imported', 'torch' in sys.modules or 'triton' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:3] == ["torch machinery", "triton machinery", "imported False"]


def test_the_standard_library() -> None:
    import json

    assert classify(os.__file__) is Origin.LIBRARY and classify(json.__file__) is Origin.LIBRARY
    assert is_user_file(os.__file__) and is_library_file(os.__file__) and not is_own_file(os.__file__)


def test_symlinks_are_resolved(tmp_path: Path) -> None:
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    real = _write(site / "kernlib" / "ops.py")
    link = tmp_path / "proj" / "vendored"
    link.parent.mkdir()
    link.symlink_to(site / "kernlib")
    assert classify(str(link / "ops.py")) is Origin.LIBRARY
    assert classify(str(real)) is Origin.LIBRARY


def test_user_tree_is_scoped(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    model = site / "proj" / "model.py"
    with user_tree(site / "proj"):
        with user_tree(None):
            assert classify(str(model)) is Origin.LIBRARY
        assert classify(str(model)) is Origin.USER
    assert classify(str(model)) is Origin.LIBRARY
    with pytest.raises(RuntimeError), user_tree(site / "proj"):
        raise RuntimeError
    assert classify(str(model)) is Origin.LIBRARY


def test_every_module_of_this_tool_is_machinery() -> None:
    import tritoninspect.cli
    import tritoninspect.model.report

    for module in (tritoninspect.cli, tritoninspect.model.report, origin):
        assert classify(str(module.__file__)) is Origin.MACHINERY, module.__name__


def test_a_library_file_is_not_the_users_own() -> None:
    path = "/home/user/venv/lib/python3.11/site-packages/kernlib/ops.py"
    assert (origin.is_user_file(path), origin.is_library_file(path), origin.is_own_file(path)) == (True, True, False)


def test_inductor_and_triton_generated_code_is_machinery(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A failure raised in Inductor's output code (`call` in <cache>/cr/crxyz.py) is not the user's frame.
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path / "fresh")])  # a new environment, not the cached one
    output_code = _write(tmp_path / "inductor" / "cr" / "crabc123.py", "def call(args): ...\n")
    kernel = _write(tmp_path / "triton" / "KEY" / "add_kernel.py")
    users = _write(tmp_path / "inductor_notes" / "model.py")  # a sibling folder with a similar name
    assert classify(str(output_code)) is Origin.MACHINERY and classify(str(kernel)) is Origin.MACHINERY
    assert classify(str(users)) is Origin.USER


def test_torchs_default_inductor_cache_is_machinery(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    monkeypatch.setattr(sys, "path", [*sys.path, "/nonexistent-fresh-environment"])
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir

    assert classify(os.path.join(default_cache_dir(), "ab", "cabcdef.py")) is Origin.MACHINERY


def test_library_of_names_the_distribution_and_where_to_report(tmp_path: Path, on_sys_path: object) -> None:
    target = tmp_path / "deps"
    _dist_info(target, "kern-lib", ["kern_lib/__init__.py", "kern_lib/ops.py"])
    meta = target / "kern-lib-1.0.dist-info" / "METADATA"
    meta.write_text(meta.read_text() + "Project-URL: Homepage, https://example.org/kern\n"
                    "Project-URL: Bug Tracker, https://example.org/kern/issues\n")
    _write(target / "kern-lib-1.0.dist-info" / "top_level.txt", "kern_lib\n")
    mine = _write(tmp_path / "model.py")
    on_sys_path(target)  # type: ignore[operator]
    found = origin.library_of(str(target / "kern_lib" / "ops.py"))
    assert found == origin.Library("kern-lib", "1.0", "kern_lib", "https://example.org/kern/issues")
    assert origin.library_of(str(mine)) is None  # the user's own code
    assert origin.library_of(sysconfig.get_paths()["stdlib"] + "/json/__init__.py") is None  # no distribution
    assert origin.library_of(str(PACKAGE_DIR / "origin.py")) is None  # the machinery


def test_library_of_reads_only_the_metadata_beside_the_package(
        tmp_path: Path, on_sys_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """The distribution is found from the dist-info folders beside the package, by top_level.txt or the
    RECORD's first components, without importlib's scan of every distribution (which stats every listed file);
    two distributions sharing a namespace package are told apart by the file's RECORD line."""
    target = tmp_path / "deps"
    _dist_info(target, "fla-core", ["fla/__init__.py", "fla/ops/chunk.py"])  # named unlike its package
    _dist_info(target, "ns-one", ["nsp/one/__init__.py"])
    _dist_info(target, "ns-two", ["nsp/two/__init__.py", "nsp/two/k.py"])
    on_sys_path(target)  # type: ignore[operator]

    def scan() -> None:
        raise AssertionError("importlib's scan of all distributions was used")

    monkeypatch.setattr(importlib.metadata, "packages_distributions", scan)
    origin._packages_distributions.cache_clear()
    assert origin.library_of(str(target / "fla" / "ops" / "chunk.py")) == origin.Library("fla-core", "1.0", "fla", "")
    assert origin.library_of(str(target / "nsp" / "two" / "k.py")) == origin.Library("ns-two", "1.0", "nsp", "")


def test_library_of_agrees_with_importlib_for_every_installed_package() -> None:
    """Against `importlib.metadata.packages_distributions`, for each top-level package installed here
    (torch, triton, typer, rich, depyf and the libraries of the real-library tier when installed)."""
    import importlib.util

    checked = 0
    for package in sorted(importlib.metadata.packages_distributions()):
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            continue
        if spec is None or not spec.origin or not os.path.isabs(spec.origin):
            continue
        found = origin.library_of(spec.origin)
        if found is None:  # the machinery, or not a library here
            continue
        assert found == origin._distribution(package, tuple(sys.path)), package
        checked += 1
    assert checked >= 5
