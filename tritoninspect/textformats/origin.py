"""Where a source file comes from: the user's code, an installed library, or the machinery.

Decided from where Python installs and imports packages, never from path
substrings: a user's checkout in a folder named ``tritoninspect``, kernels under
``mylib/triton/``, or a library installed with ``pip install --target DIR`` are
all told apart correctly. Torch-free; importing it imports neither torch nor Triton.

Roots, each a real (symlink-resolved) directory or file:

- machinery: this tool's package directory (exactly), the package directories of
  torch, Triton, the CLI and test runners (`MACHINERY_PACKAGES`, found without
  importing them), the interpreter's scripts directory (console launchers), and
  Inductor's and Triton's cache directories (generated output code and kernels);
- library: the standard library, the site directories (purelib/platlib,
  ``site.getsitepackages()``, the user site), any directory named
  ``site-packages`` or ``dist-packages`` (the install schemes' names, so paths of
  other environments count too), and the packages that a ``*.dist-info`` /
  ``*.egg-info`` beside them lists in a ``sys.path`` directory (what
  ``pip install --target DIR`` makes);
- user: the directory the target was loaded from, inside `user_tree()`.

The deepest root that holds a path decides (ties: machinery, then user, then
library; a package listed by a dist-info ranks as deep as the directory it was
installed into), so ``<checkout>/.venv/.../site-packages/pkg`` and
``<checkout>/vendor/pkg`` (``--target vendor``) are libraries although they are
under the user's checkout, and the checkout's own package is the user's although
the checkout sits on ``sys.path`` beside its ``*.egg-info`` (``pip install -e .``
with setuptools), also when the target is loaded from a folder inside it
(``proj/examples/model.py``). A library file whose top-level package is one of
the machinery packages (``.../site-packages/torch/...`` of another environment)
is machinery.
A path no root holds is the user's.

Results are cached per path (and per `sys.path` and user roots).
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
import functools
import getpass
import importlib.metadata
import importlib.util
import os
import re
import site
import sys
import sysconfig
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from dataclasses import dataclass
from typing import Any

from tritoninspect.model.report import Library

__all__ = ["Library", "Origin", "classify", "is_library_file", "is_own_file", "is_pythons_own", "is_user_file",
           "library_of", "user_tree"]


class Origin(enum.Enum):
    """Who a source file belongs to."""

    #: torch, Triton, this tool, the CLI and test runners, launchers, and
    #: pseudo-files (``<frozen importlib._bootstrap>``, ``<string>``).
    MACHINERY = "machinery"
    #: The standard library and installed distributions.
    LIBRARY = "library"
    #: Everything else: the user's own code.
    USER = "user"


#: Top-level packages whose frames are never the user's (the tool itself is found by its own path).
MACHINERY_PACKAGES = ("torch", "triton", "typer", "click", "importlib", "_pytest", "pluggy")
#: Directory names the install schemes give installed packages (Debian's python uses dist-packages).
INSTALL_DIR_NAMES = frozenset({"site-packages", "dist-packages"})
#: Which origin wins when two roots are the same directory.
#: This tool's package directory (tritoninspect/, above textformats/).
_TOOL_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_TIE_ORDER = {Origin.LIBRARY: 0, Origin.USER: 1, Origin.MACHINERY: 2}

#: The user's roots while a capture runs (see `user_tree`); empty outside one.
_USER_ROOTS: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("tritoninspect_user_roots", default=())


@contextlib.contextmanager
def user_tree(*roots: str | os.PathLike[str] | None) -> Iterator[None]:
    """Within the block, files under `roots` (the directory a target was loaded
    from) are the user's even where they also sit on a site path. `None`s are
    skipped; the previous roots come back on exit."""
    token = _USER_ROOTS.set(tuple(_real(os.fspath(r)) for r in roots if r is not None))
    try:
        yield
    finally:
        _USER_ROOTS.reset(token)


def classify(path: str) -> Origin:
    """The origin of the source file `path` (as a frame or traceback names it)."""
    if not path or path.startswith("<"):
        return Origin.MACHINERY
    return _classify(os.path.abspath(path), _USER_ROOTS.get(), _environment(tuple(sys.path)))


def is_user_file(path: str) -> bool:
    """Not the machinery: user code, an installed library or the standard library
    (anything but torch, Triton, this tool, the CLI and test runners, launchers)."""
    return classify(path) is not Origin.MACHINERY


def is_library_file(path: str) -> bool:
    """Installed third-party or standard-library code."""
    return classify(path) is Origin.LIBRARY


def is_own_file(path: str) -> bool:
    """The user's own code: neither the machinery nor an installed library."""
    return classify(path) is Origin.USER


def is_tool_file(path: str) -> bool:
    """A file of tritoninspect's own package (the directory above textformats/)."""
    return bool(path) and not path.startswith("<") and _contains(_real(_TOOL_DIR), _real(os.path.abspath(path)))


def is_pythons_own(path: str) -> bool:
    """Python's own code: a frozen module or its standard library, not the site directory inside it."""
    if path.startswith("<frozen "):
        return True
    real = _real(os.path.abspath(path))
    return any(_contains(d, real) for d in _stdlib_dirs()) and _install_dir_above(real) is None


def library_of(path: str) -> Library | None:
    """The installed distribution `path` comes from (the one whose metadata beside the top-level package
    lists it, else by `importlib.metadata.packages_distributions`); None for the user's code, the
    machinery, the standard library and files no distribution lists."""
    if not path or path.startswith("<"):
        return None
    real = _real(os.path.abspath(path))
    kind, package = _decide(real, _USER_ROOTS.get(), _environment(tuple(sys.path)))
    if kind is not Origin.LIBRARY or not package:
        return None
    directory, relative = _install_place(real, package)
    dist = _listing_distribution(package, directory, relative) if directory else None
    if dist is None:  # no distribution beside it lists it: ask importlib, over all of sys.path
        return _distribution(package, tuple(sys.path))
    return _library(dist, dist.metadata.get("Name") or package, package)


def _library(dist: importlib.metadata.Distribution, name: str, package: str) -> Library:
    return Library(dist.metadata.get("Name") or name, dist.version, package, _issues_url(dist))


@functools.lru_cache(maxsize=256)
def _distribution(package: str, sys_path: tuple[str, ...]) -> Library | None:
    names = _packages_distributions(sys_path).get(package) or []
    for name in names:
        dist = _find_distribution(name)
        if dist is not None:
            return _library(dist, name, package)
    return None


def _install_place(real: str, package: str) -> tuple[str, str]:
    """The directory top-level `package` is installed in, above the file `real`, and the file's path
    below that directory ("/"-separated, as a RECORD lists it); ("", "") when no ancestor is `package`."""
    head = real
    while True:
        parent = os.path.dirname(head)
        if parent == head:
            return "", ""
        if _top_level_name(head) == package:
            return parent, os.path.relpath(real, parent).replace(os.sep, "/")
        head = parent


def _listing_distribution(package: str, directory: str, relative: str) -> importlib.metadata.Distribution | None:
    """The distribution in `directory` that installed top-level `package`, read from the metadata
    beside it only: a ``top_level.txt``, else the first components of its RECORD, as
    `importlib.metadata.packages_distributions` reads them, but without asking whether each listed file
    exists (it stats every file of every distribution on sys.path: 1.9 s on the H200's image, a tenth of
    a cold `graph` of a Liger block). Of several (a namespace package), the one whose RECORD lists the file.
    Distributions named like the package are read first; most libraries are (liger_kernel)."""
    listed = _distributions_in(directory)
    wanted = _normal(package)
    ordered = sorted(listed, key=lambda item: item[0] != wanted)
    claiming = [dist for _, dist in ordered if package in _top_levels(dist)]
    if len(claiming) > 1:
        return next((d for d in claiming if relative in _recorded_files(d)), claiming[0])
    return claiming[0] if claiming else None


@functools.lru_cache(maxsize=64)
def _distributions_in(directory: str) -> tuple[tuple[str, importlib.metadata.Distribution], ...]:
    """(normalised name, distribution) of each ``*.dist-info`` / ``*.egg-info`` folder in `directory`."""
    try:
        entries = sorted(os.listdir(directory))
    except OSError:
        return ()
    return tuple((_normal(entry.rsplit(".", 1)[0].partition("-")[0]), importlib.metadata.PathDistribution(Path(directory, entry)))
                 for entry in entries if entry.endswith((".dist-info", ".egg-info")))


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


@functools.lru_cache(maxsize=1024)  # the distributions are _distributions_in's, kept
def _top_levels(dist: importlib.metadata.Distribution) -> frozenset[str]:
    declared = (dist.read_text("top_level.txt") or "").split()
    if declared:
        return frozenset(declared)
    names = set()
    for file in _recorded_files(dist):
        first, slash, _ = file.partition("/")
        if slash and first not in (os.pardir, "__pycache__"):
            names.add(first)
        elif not slash and file.endswith(".py"):
            names.add(file[:-3])
    return frozenset(names)


def _recorded_files(dist: importlib.metadata.Distribution) -> frozenset[str]:
    """The files a dist-info's RECORD lists, as written there (no existence check)."""
    text = dist.read_text("RECORD") or ""
    return frozenset(line.partition(",")[0] for line in text.splitlines() if line)


def _find_distribution(name: str) -> importlib.metadata.Distribution | None:
    """The distribution named `name`: by its normalised folder name, else by the Name in its metadata
    (a `*.dist-info` folder named otherwise)."""
    try:
        return importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        pass
    return next((d for d in importlib.metadata.distributions() if d.metadata.get("Name") == name), None)


@functools.lru_cache(maxsize=8)
def _packages_distributions(sys_path: tuple[str, ...]) -> dict[str, list[str]]:
    """Top-level import name -> distributions, for this `sys.path` (the key: a change rescans)."""
    del sys_path
    return dict(importlib.metadata.packages_distributions())


#: Project-URL labels, most wanted first (an issue tracker, then the code, then the home page).
_URL_LABELS = ("bug tracker", "issues", "issue tracker", "bug reports", "repository", "source", "source code",
               "homepage", "home")


def _issues_url(dist: importlib.metadata.Distribution) -> str:
    urls: dict[str, str] = {}
    for entry in dist.metadata.get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        urls.setdefault(label.strip().lower(), url.strip())
    for label in _URL_LABELS:
        if urls.get(label):
            return urls[label]
    return str(dist.metadata.get("Home-page") or "")


# --- classification ----------------------------------------------------------------


@dataclass(frozen=True, eq=False)  # identity hash: one instance per sys.path, cached
class _Environment:
    """The machinery and library roots of this interpreter for one `sys.path`."""

    machinery: tuple[str, ...]
    #: Directories whose entries are installed top-level packages (site dirs, the stdlib).
    library_dirs: tuple[str, ...]
    #: (package or module, the sys.path directory it was installed into) for each one a
    #: dist-info beside it lists; it ranks as deep as that directory.
    library_packages: tuple[tuple[str, str], ...]
    #: The sys.path directories among those whose packages only a development egg-info lists (a
    #: checkout: `pip install -e .` with setuptools, `setup.py develop`): a user root under one
    #: makes them the user's (see `_decide`).
    checkouts: frozenset[str] = frozenset()


@functools.lru_cache(maxsize=65536)
def _classify(path: str, user_roots: tuple[str, ...], env: _Environment) -> Origin:
    return _decide(path, user_roots, env)[0]


def _decide(path: str, user_roots: tuple[str, ...], env: _Environment) -> tuple[Origin, str]:
    """The origin of `path`, and the top-level package or module it is in below the deciding
    root ("" when that root is one package, or for the user's code)."""
    real = _real(path)
    named = _install_dir_above(real)
    # (root, the directory whose depth ranks it, origin); a library root whose rank is
    # itself is a directory of installed packages, else one installed package.
    roots = [
        *((root, root, Origin.MACHINERY) for root in env.machinery),
        *((root, root, Origin.LIBRARY) for root in env.library_dirs),
        *((root, into, Origin.LIBRARY) for root, into in env.library_packages
          if not (into in env.checkouts and any(_contains(into, u) for u in user_roots))),
        *((root, root, Origin.USER) for root in user_roots),
        *(((named, named, Origin.LIBRARY),) if named else ()),
    ]
    holding = [item for item in roots if _contains(item[0], real)]
    if not holding:
        return Origin.USER, ""
    # Every ranking directory holds `real`, so the longest is the deepest.
    root, rank, kind = max(holding, key=lambda item: (len(item[1]), _TIE_ORDER[item[2]]))
    top = root if root != rank else _first_below(root, real)
    if kind is Origin.LIBRARY and _top_level_name(top) in MACHINERY_PACKAGES:
        return Origin.MACHINERY, ""
    return kind, _top_level_name(top) if kind is Origin.LIBRARY else ""


def _first_below(root: str, path: str) -> str:
    """The first component of `path` below `root` (empty for `root` itself)."""
    first = os.path.relpath(path, root).split(os.sep, 1)[0]
    return "" if first in (os.curdir, os.pardir) else first


def _top_level_name(top: str) -> str:
    """The import name of an installed top-level package or module (``x.py``, ``x.cpython-311-...so``)."""
    return os.path.basename(top).partition(".")[0]


def _contains(root: str, path: str) -> bool:
    """`path` is `root` or lies under it (whole components, both real paths)."""
    try:
        return os.path.commonpath((root, path)) == root
    except ValueError:  # different drives (Windows) or a mix of absolute and relative
        return False


def _install_dir_above(path: str) -> str | None:
    """The deepest ancestor directory of `path` named site-packages or dist-packages."""
    head = os.path.dirname(path)
    while True:
        if os.path.basename(head) in INSTALL_DIR_NAMES:
            return head
        parent = os.path.dirname(head)
        if parent == head:
            return None
        head = parent


def _real(path: str) -> str:
    return os.path.realpath(path)


# --- roots ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _environment(sys_path: tuple[str, ...]) -> _Environment:
    """Machinery and library roots; recomputed when `sys.path` changes."""
    site_dirs = _site_dirs()
    return _Environment(
        machinery=tuple(sorted(_machinery_roots())),
        library_dirs=tuple(sorted(site_dirs | _stdlib_dirs())),
        **_target_dirs(sys_path, site_dirs),
    )


def _machinery_roots() -> set[str]:
    roots = {_real(_TOOL_DIR)}  # this tool: its own package, exactly
    for name in MACHINERY_PACKAGES:
        roots.update(_real(p) for p in _package_locations(name))
    roots.update(_real(paths["scripts"]) for paths in _scheme_paths() if paths.get("scripts"))
    roots.update(_real(d) for d in _generated_code_dirs())
    return roots


def _generated_code_dirs() -> set[str]:
    """Where Inductor and Triton write the code they generate (output code, compiled kernels): its
    frames (`call` in `<cache>/xy/cxyz....py`) are torch's, never the user's. Torch's own defaults,
    computed as torch/_inductor/runtime/cache_dir_utils.py and triton/knobs.py do, without importing
    them (the environment variables win, as there)."""
    try:
        user = getpass.getuser()
    except (KeyError, ModuleNotFoundError, OSError):
        user = f"uid_{os.getuid()}" if hasattr(os, "getuid") else "unknown_user"
    try:
        temp = tempfile.gettempdir()
    except OSError:  # no usable temporary folder: torch would have had none for its cache either
        temp = None
    inductor = os.environ.get("TORCHINDUCTOR_CACHE_DIR") or (
        temp and os.path.join(temp, "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user)))
    triton_home = os.environ.get("TRITON_HOME") or os.path.expanduser("~/")
    triton = os.environ.get("TRITON_CACHE_DIR") or os.path.join(triton_home, ".triton", "cache")
    return {os.path.abspath(d) for d in (inductor, triton) if d}


def _package_locations(name: str) -> list[str]:
    """Where top-level package `name` lives: from the loaded module, else from its
    spec (found without importing it); empty when it is not installed."""
    module = sys.modules.get(name)
    if module is not None:
        paths = list(getattr(module, "__path__", None) or [])
        file = getattr(module, "__file__", None)
        return paths or ([file] if file else [])
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    if spec.submodule_search_locations:
        return list(spec.submodule_search_locations)
    return [spec.origin] if spec.origin and os.path.isabs(spec.origin) else []


def _scheme_paths() -> list[dict[str, str]]:
    """sysconfig's paths for this interpreter's install scheme, and for the user
    scheme when user site-packages are on."""
    paths = [sysconfig.get_paths()]
    user = "nt_user" if os.name == "nt" else "posix_user"
    if site.ENABLE_USER_SITE and user in sysconfig.get_scheme_names():
        paths.append(sysconfig.get_paths(user))
    return paths


def _site_dirs() -> set[str]:
    """Directories whose every package is installed: purelib/platlib, the site
    module's directories, the user site."""
    dirs: set[str] = set()
    for paths in _scheme_paths():
        dirs.update(paths[key] for key in ("purelib", "platlib") if paths.get(key))
    dirs.update(getattr(site, "getsitepackages", list)())
    if site.ENABLE_USER_SITE:
        dirs.add(site.getusersitepackages())
    return {_real(d) for d in dirs}


def _stdlib_dirs() -> set[str]:
    paths = sysconfig.get_paths()
    return {_real(paths[key]) for key in ("stdlib", "platstdlib") if paths.get(key)}


def _target_dirs(sys_path: Iterable[str], site_dirs: set[str]) -> dict[str, Any]:
    """`library_packages` and `checkouts` of `_Environment`, from one look at each `sys.path`
    directory that is not a site directory:

    - (package, directory) for the packages that a ``*.dist-info`` / ``*.egg-info`` lists beside
      them there (``pip install --target DIR``);
    - the directories whose distributions all have development metadata: an egg-info with no
      installer's file list (a dist-info has RECORD; pip's egg-info installs have
      installed-files.txt), as ``pip install -e .`` with setuptools leaves in a checkout. A target
      loaded from inside one (``proj/examples/model.py`` importing ``proj/mykern``) is the user's
      project: its package is theirs, not an installed library."""
    packages: set[tuple[str, str]] = set()
    checkouts: set[str] = set()
    for entry in sys_path:
        directory = _real(entry or os.curdir)
        if directory in site_dirs or not os.path.isdir(directory):
            continue
        dists = list(importlib.metadata.distributions(path=[directory]))
        packages.update((package, directory) for package in _installed_here(directory, dists))
        if dists and all(_in_development(d) for d in dists):
            checkouts.add(directory)
    return {"library_packages": tuple(sorted(packages)), "checkouts": frozenset(checkouts)}


def _in_development(dist: importlib.metadata.Distribution) -> bool:
    return dist.read_text("RECORD") is None and dist.read_text("installed-files.txt") is None \
        and dist.read_text("top_level.txt") is not None


def _installed_here(directory: str, dists: list[importlib.metadata.Distribution]) -> set[str]:
    """Paths of the top-level packages and modules the distributions `dists` in `directory` installed."""
    roots: set[str] = set()
    for dist in dists:
        names = _installed_names(dist)
        if not names:  # no file list: everything beside it, to be safe
            return {directory}
        roots.update(os.path.join(directory, name) for name in names)
    return {_real(r) for r in roots}


def _installed_names(dist: importlib.metadata.Distribution) -> set[str]:
    """The top-level files and directories a distribution installed: each name in
    top_level.txt (as a package or a module) and, for a dist-info, the first
    component of each file its RECORD lists (an egg-info's SOURCES.txt lists the
    sdist, tests and all, so it is not used)."""
    names = {n + suffix for n in (dist.read_text("top_level.txt") or "").split() for suffix in ("", ".py")}
    if dist.read_text("RECORD") is not None:
        for file in dist.files or ():
            first = file.parts[0] if file.parts else ""
            if first and first not in (os.pardir, "__pycache__") and not first.endswith((".dist-info", ".data")):
                names.add(first)
    return names
