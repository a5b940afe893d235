"""The shape of the package (tier a): no import cycles, the layers' boundaries, the root.

Imports are read from the source with ast (every `import`, at module level or inside a
function, `TYPE_CHECKING` blocks too), so nothing is imported to check them. `from a import b`
counts as an import of module `a.b` when that is a module, else of `a`; a package's
`__init__` is not implied.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tritoninspect"


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    files = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


MODULES = module_files()


def tree(name: str, source: str | None = None) -> ast.Module:
    return ast.parse(MODULES[name].read_text(encoding="utf-8") if source is None else source)


def imported_names(name: str, source: str | None = None) -> list[tuple[str, str | None]]:
    """(module, name) per import in `name` (or in `source` as if it were `name`): `import a.b`
    gives ("a.b", None), `from a import b` ("a", "b"), relative imports resolved."""
    path = MODULES[name]
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(tree(name, source)):
        if isinstance(node, ast.Import):
            found.extend((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            found.extend((base, alias.name) for alias in node.names)
    return found


def imports_of(name: str) -> set[str]:
    """The package's modules that `name` imports."""
    found: set[str] = set()
    for module, imported in imported_names(name):
        target = f"{module}.{imported}" if imported else module
        found.add(target if target in MODULES else module)
    return (found & set(MODULES)) - {name}


def outside_imports(name: str) -> set[str]:
    """The top-level packages other than this one that `name` imports (`torch`, `rich`, `json`...)."""
    return {module.split(".")[0] for module, _ in imported_names(name)} - {"", "tritoninspect"}


GRAPH = {name: imports_of(name) for name in MODULES}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_import_graph_is_read() -> None:
    assert "tritoninspect.commands._edge" in GRAPH["tritoninspect.commands.graph"]
    assert "tritoninspect.render._format" in GRAPH["tritoninspect.render.dump"]  # from ... import module
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles() -> None:
    assert cycles(GRAPH) == []


COMMANDS = sorted(name for name in MODULES if name.startswith("tritoninspect.commands.") and
                  not name.rpartition(".")[2].startswith("_"))


def test_each_command_has_its_module() -> None:
    assert [name.rpartition(".")[2] for name in COMMANDS] == ["breaks", "check", "diff", "export", "graph"]


@pytest.mark.parametrize("name", COMMANDS)
def test_no_command_imports_another_or_the_app(name: str) -> None:
    assert not GRAPH[name] & (set(COMMANDS) | {"tritoninspect.cli"})


def test_only_the_cli_and_the_commands_use_the_edge() -> None:
    users = {name for name, deps in GRAPH.items() if deps & {"tritoninspect.commands._edge", "tritoninspect.cli"}}
    assert users <= {"tritoninspect.__main__", "tritoninspect.cli", *(n for n in MODULES if in_package(n, "commands"))}


def test_the_core_never_imports_the_command_layer() -> None:
    """One-way layers: model, source, capture, analyse, render, run and children know nothing of the CLI."""
    edge = {name for name in MODULES if name == "tritoninspect.cli" or name.startswith("tritoninspect.commands")}
    core = set(MODULES) - edge - {"tritoninspect.__main__"}
    assert {name: sorted(GRAPH[name] & edge) for name in core if GRAPH[name] & edge} == {}


#: Issue 10's bound: a module longer than this is two modules.
MAX_MODULE_LINES = 500


def test_no_module_over_the_line_bound() -> None:
    lengths = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in MODULES.items()}
    assert {name: n for name, n in lengths.items() if n > MAX_MODULE_LINES} == {}


# --- the layers: the data model at the bottom, the pure core over it only -------------------------

MODEL = {name for name in MODULES if name == "tritoninspect.model" or name.startswith("tritoninspect.model.")}
#: The torch-free core: analyses, renderers and text parsers, over the data model only.
PURE = ("analyse", "render", "textformats")


def in_package(name: str, *packages: str) -> bool:
    return any(name == f"tritoninspect.{p}" or name.startswith(f"tritoninspect.{p}.") for p in packages)


def test_the_model_imports_nothing_of_the_package_outside_it_and_no_torch() -> None:
    assert MODEL and {name: sorted(GRAPH[name] - MODEL) for name in MODEL if GRAPH[name] - MODEL} == {}
    assert {name: sorted(outside_imports(name) & {"torch", "triton"}) for name in MODEL
            if outside_imports(name) & {"torch", "triton"}} == {}


@pytest.mark.parametrize("package", PURE)
def test_the_pure_core_imports_only_the_model_and_no_torch(package: str) -> None:
    """analyse/, render/ and textformats/ read records and reports (tritoninspect.model) and each
    other: never capture/, the run or the edge, never torch or triton."""
    names = [name for name in MODULES if in_package(name, package)]
    allowed = MODEL | {name for name in MODULES if in_package(name, *PURE)}
    assert names and {name: sorted(GRAPH[name] - allowed) for name in names if GRAPH[name] - allowed} == {}
    assert {name: sorted(outside_imports(name) & {"torch", "triton"}) for name in names
            if outside_imports(name) & {"torch", "triton"}} == {}


def test_the_layer_checks_see_a_forbidden_import() -> None:
    assert "tritoninspect.model.records" in GRAPH["tritoninspect.analyse.kernels"]
    assert "torch" in outside_imports("tritoninspect.capture.session")


# --- the root: entry points only -------------------------------------------------------------------

#: The package root holds only entry points: the Python API (`__init__`), `__main__`, the CLI,
#: and room for a few more (a pytest plugin); everything else lives in a package named for its role.
MAX_ROOT_MODULES = 6


def test_the_root_holds_only_a_few_entry_points() -> None:
    root = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(root) <= MAX_ROOT_MODULES, root
    assert {"__init__.py", "__main__.py", "cli.py"} <= set(root)


# --- no private name crosses a module boundary -----------------------------------------------------


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_names_used(name: str, source: str | None = None) -> list[str]:
    """The `_private` names of other modules that `name` uses: imported (`from m import _f`), or
    read off an imported module (`m._f`). A package's `_module` may be imported inside that package."""
    found: list[str] = []
    modules: dict[str, str] = {}  # local name -> the module of ours it is bound to
    for module, imported in imported_names(name, source):
        if not module.startswith("tritoninspect"):
            continue
        target = f"{module}.{imported}" if imported else module
        if imported is None:
            modules[module.split(".")[0]] = "tritoninspect"
        elif target in MODULES:
            modules[imported] = target
            if is_private(imported) and not name.startswith(f"{module}."):
                found.append(target)
        elif is_private(imported):
            found.append(target)
    for node in ast.walk(tree(name, source)):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            owner = dotted(node.value, modules)
            if owner in MODULES and owner != name:
                found.append(f"{owner}.{node.attr}")
    return found


def dotted(node: ast.expr, modules: dict[str, str]) -> str | None:
    """The module an expression such as `textformats.origin` names, when it names one of ours."""
    if isinstance(node, ast.Name):
        return modules.get(node.id)
    if isinstance(node, ast.Attribute):
        owner = dotted(node.value, modules)
        return f"{owner}.{node.attr}" if owner is not None else None
    return None


def test_no_private_name_is_used_across_modules() -> None:
    """A `_name` is its module's own: a name another module needs is public where it belongs."""
    assert {name: used for name in MODULES if (used := private_names_used(name))} == {}


def test_the_private_name_check_sees_one() -> None:
    name = "tritoninspect.commands.graph"
    assert private_names_used(name, "from tritoninspect.render.terminal import _dynamic") == [
        "tritoninspect.render.terminal._dynamic"]
    assert private_names_used(name, "from tritoninspect.render import _format") == ["tritoninspect.render._format"]
    assert private_names_used(name, "from tritoninspect.capture import compat\ncompat.dynamo._x") == [
        "tritoninspect.capture.compat.dynamo._x"]
    assert private_names_used("tritoninspect.render.dump", "from tritoninspect.render import _format") == []
