"""Tests for tritoninspect.source.target: spec parsing, inputs, import and model loading (no compiling)."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from tritoninspect.model.errors import (
    EnvironmentProblem,
    ExitCode,
    InputsError,
    TargetError,
    UserCodeError,
)
from tritoninspect.source.target import (
    InputSpec,
    LoadedTarget,
    TargetSpec,
    describe_inputs,
    format_user_traceback,
    import_target_module,
    load_target,
    make_inputs,
    parse_inputs,
    parse_spec,
)

TESTS = Path(__file__).resolve().parent
ASSETS = TESTS / "assets"
SIMPLE = "assets/simple_model.py"
CLASSES = "assets/class_inputs_model.py"


def tool_frames(tb: str) -> list[str]:
    """Frames of a formatted traceback in importlib or tritoninspect itself (by their
    package directories: a checkout in a folder named tritoninspect is no tool frame)."""
    import importlib

    import tritoninspect

    tools = [Path(importlib.__file__).resolve().parent, Path(tritoninspect.__file__).resolve().parent]
    files = re.findall(r'^\s*File "([^"]+)"', tb, re.M)
    return [f for f in files if f.startswith("<frozen") or any(Path(f).resolve().is_relative_to(t) for t in tools)]


@pytest.fixture(autouse=True)
def isolated_imports(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Run each test from tests/ and undo its sys.path and user-module imports."""
    monkeypatch.chdir(TESTS)
    # A copy, so entries the loader inserts vanish when monkeypatch restores the original.
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    roots = (str(ASSETS), str(tmp_path_factory.getbasetemp()))
    # Only drop the user modules: removing torch submodules imported on the way would
    # leave stale copies referenced from torch itself.
    for name in set(sys.modules) - before:
        if (getattr(sys.modules[name], "__file__", None) or "").startswith(roots):
            del sys.modules[name]


def write_module(directory: Path, name: str, source: str) -> Path:
    """Write a small user module into ``directory`` and return its path."""
    path = directory / name
    path.write_text(source)
    return path


def load(spec: str, **kwargs: object) -> LoadedTarget:
    return load_target(parse_spec(spec), **kwargs)  # type: ignore[arg-type]


def line_of(path: Path, marker: str) -> int:
    """The 1-based line number of the line carrying ``marker``."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if marker in line)


# ---------------------------------------------------------------------- parse_spec


def test_relative_path_spec() -> None:
    spec = parse_spec(f"{SIMPLE}:Net")
    assert spec == TargetSpec(
        text=f"{SIMPLE}:Net",
        path=ASSETS / "simple_model.py",
        module="simple_model",
        attr="Net",
        sys_path_entry=ASSETS,
    )
    assert spec.display_name == SIMPLE


def test_absolute_path_spec() -> None:
    spec = parse_spec(f"{ASSETS / 'simple_model.py'}:Block")
    assert (spec.path, spec.module, spec.attr) == (ASSETS / "simple_model.py", "simple_model", "Block")


def test_file_inside_packages_is_named_from_the_package_root() -> None:
    spec = parse_spec("assets/pkg/sub/model.py:Net")
    assert spec.module == "pkg.sub.model"
    assert spec.sys_path_entry == ASSETS


def test_package_directory_spec() -> None:
    spec = parse_spec("assets/pkg/sub:Net")
    assert (spec.module, spec.sys_path_entry) == ("pkg.sub", ASSETS)


def test_dotted_spec_looks_in_the_current_directory() -> None:
    spec = parse_spec("pkg.sub.model:Net")
    assert spec == TargetSpec("pkg.sub.model:Net", None, "pkg.sub.model", "Net", TESTS)
    assert spec.display_name == "pkg.sub.model"


def test_missing_file() -> None:
    with pytest.raises(TargetError, match=r"^No such file: nope/model\.py$"):
        parse_spec("nope/model.py:Net")


def test_windows_drive_is_not_a_second_colon() -> None:
    # Parsed as a path (one attribute colon); it just does not exist here.
    with pytest.raises(TargetError, match="No such file"):
        parse_spec(r"C:\work\model.py:Net")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("assets/simple_model", "no ':'"),
        ("", "empty target"),
        ("assets/simple_model.py:", "empty"),
        (":Net", "empty"),
        ("a:b:Net", "more than one ':'"),
        ("assets/simple_model.py:Net-2", "not a Python identifier"),
        ("assets/simple_model.py:class", "not a Python identifier"),
        ("my-pkg.model:Net", "not a dotted module name"),
        ("pkg..model:Net", "not a dotted module name"),
    ],
)
def test_malformed_spec_shows_the_expected_forms(text: str, reason: str) -> None:
    with pytest.raises(TargetError) as info:
        parse_spec(text)
    message = info.value.message
    assert reason in message
    assert '"path/to/model.py:Net" or "package.module:Net"' in message
    assert "\n" not in message
    assert info.value.exit_code == ExitCode.TARGET


def test_not_a_python_file(tmp_path: Path) -> None:
    path = write_module(tmp_path, "model.txt", "")
    with pytest.raises(TargetError, match="Not a Python file"):
        parse_spec(f"{path}:Net")


def test_file_name_that_is_not_a_module_name(tmp_path: Path) -> None:
    path = write_module(tmp_path, "my-model.py", "")
    with pytest.raises(TargetError, match="'my-model' is not a valid module name"):
        parse_spec(f"{path}:Net")


# -------------------------------------------------------------------- parse_inputs


def test_parse_inputs_with_and_without_dtype() -> None:
    assert parse_inputs("4x128:float16,4x128") == (
        InputSpec((4, 128), "float16"),
        InputSpec((4, 128), "float32"),
    )


def test_parse_inputs_tolerates_spaces_and_case() -> None:
    assert parse_inputs(" 4 X 8 : FP16 , 2") == (InputSpec((4, 8), "float16"), InputSpec((2,), "float32"))


@pytest.mark.parametrize(
    ("alias", "dtype"),
    [
        ("fp16", "float16"), ("half", "float16"), ("f16", "float16"),
        ("bf16", "bfloat16"), ("bfloat16", "bfloat16"),
        ("fp32", "float32"), ("float", "float32"), ("float32", "float32"),
        ("fp64", "float64"), ("double", "float64"),
        ("int32", "int32"), ("int", "int32"), ("int64", "int64"), ("long", "int64"),
        ("int8", "int8"), ("uint8", "uint8"), ("short", "int16"),
        ("bool", "bool"), ("float8_e4m3fn", "float8_e4m3fn"), ("complex64", "complex64"),
    ],
)  # fmt: skip
def test_dtype_aliases(alias: str, dtype: str) -> None:
    assert parse_inputs(f"2:{alias}") == (InputSpec((2,), dtype),)


@pytest.mark.parametrize("text", ["scalar", "()", "SCALAR"])
def test_scalar_inputs(text: str) -> None:
    assert parse_inputs(text) == (InputSpec((), "float32"),)
    assert parse_inputs(f"{text}:int64") == (InputSpec((), "int64"),)


@pytest.mark.parametrize(
    "text",
    [
        "", "  ", "4xx128", "4x-1", "4x1.5", "abc", "4x128:", ":float16", "4x128,",
        "4x128:float16:x", "4x128:flaot16", "4x128:qint8", "4x128:Tensor", "4x128:__class__",
    ],
)  # fmt: skip
def test_bad_inputs(text: str) -> None:
    with pytest.raises(InputsError) as info:
        parse_inputs(text)
    assert "\n" not in info.value.message
    assert info.value.exit_code == ExitCode.TARGET


def test_bad_dtype_message_suggests_names() -> None:
    with pytest.raises(InputsError, match=r"unknown dtype 'flaot16'.*float16"):
        parse_inputs("4:flaot16")


def test_input_spec_round_trips_through_its_text() -> None:
    specs = (InputSpec((4, 128), "float16"), InputSpec((), "int64"))
    assert [str(s) for s in specs] == ["4x128:float16", "scalar:int64"]
    assert parse_inputs(",".join(str(s) for s in specs)) == specs


def test_make_inputs_is_seeded_and_leaves_the_global_rng_alone() -> None:
    specs = parse_inputs("4x8:fp16,3:int64,5:bool,2:float8_e4m3fn,scalar")
    state = torch.get_rng_state()
    first, second = make_inputs(specs), make_inputs(specs)
    assert torch.equal(torch.get_rng_state(), state)
    for a, b, spec in zip(first, second, specs):
        assert a.shape == spec.shape and str(a.dtype) == f"torch.{spec.dtype}"
        assert torch.equal(a.float(), b.float())
    assert 0 <= int(first[1].min()) and int(first[1].max()) < 16


def test_describe_inputs() -> None:
    calls = [(torch.ones(64), torch.ones(4, 8, dtype=torch.float16), torch.tensor(1), 3, None, [1])]
    assert describe_inputs(calls) == ("64:float32", "4x8:float16", "scalar:int64", "3", "None", "list")
    assert describe_inputs([]) == ()


# ------------------------------------------------------------- import_target_module


def test_import_puts_the_entry_first_on_sys_path_and_keeps_it() -> None:
    module = import_target_module(parse_spec(f"{SIMPLE}:Net"))
    assert module.__name__ == "simple_model"
    assert sys.path[0] == str(ASSETS)


def test_import_error_shows_only_the_users_frames() -> None:
    path = ASSETS / "broken_import.py"
    with pytest.raises(UserCodeError) as info:
        import_target_module(parse_spec("assets/broken_import.py:Net"))
    error = info.value
    assert error.message == (
        "error while importing assets/broken_import.py: FileNotFoundError: weights.bin is missing"
    )
    assert error.exit_code == ExitCode.USER_CODE
    tb = error.user_traceback
    assert f'"{path}", line {line_of(path, "CALL-LINE")}, in <module>' in tb
    assert f'"{path}", line {line_of(path, "RAISE-LINE")}, in load_weights' in tb
    assert tool_frames(tb) == []
    assert tb.rstrip().endswith("FileNotFoundError: weights.bin is missing")


def test_syntax_error_in_the_users_module(tmp_path: Path) -> None:
    path = write_module(tmp_path, "syntax_model.py", "x = 1\ndef f(:\n    pass\n")
    expected = r"^error while importing .*syntax_model\.py: SyntaxError"
    with pytest.raises(UserCodeError, match=expected) as info:
        import_target_module(parse_spec(f"{path}:Net"))
    assert str(path) in info.value.user_traceback
    assert "line 2" in info.value.user_traceback
    assert tool_frames(info.value.user_traceback) == []


def test_chained_exceptions_are_filtered_too(tmp_path: Path) -> None:
    source = 'try:\n    {}["k"]\nexcept KeyError as e:\n    raise ValueError("wrapped") from e\n'
    path = write_module(tmp_path, "chained_model.py", source)
    with pytest.raises(UserCodeError, match="ValueError: wrapped") as info:
        import_target_module(parse_spec(f"{path}:Net"))
    tb = info.value.user_traceback
    assert "KeyError: 'k'" in tb and "direct cause" in tb
    assert tool_frames(tb) == []


def test_missing_dependency_is_the_users_error(tmp_path: Path) -> None:
    path = write_module(tmp_path, "dep_model.py", "import no_such_dependency_xyz\n")
    with pytest.raises(UserCodeError) as info:
        import_target_module(parse_spec(f"{path}:Net"))
    assert info.value.message.endswith("ModuleNotFoundError: No module named 'no_such_dependency_xyz'")
    assert "dep_model.py" in info.value.user_traceback


def test_sys_exit_at_import_does_not_end_the_tool(tmp_path: Path) -> None:
    path = write_module(tmp_path, "exit_model.py", "import sys\nsys.exit(3)\n")
    with pytest.raises(UserCodeError, match="SystemExit: 3"):
        import_target_module(parse_spec(f"{path}:Net"))


@pytest.mark.parametrize("text", ["no_such_module_xyz:Net", "pkg.nope:Net", "no_such_pkg_xyz.model:Net"])
def test_missing_target_module_is_a_target_error(text: str) -> None:
    with pytest.raises(TargetError, match=r"^Cannot import '.*': No module named") as info:
        import_target_module(parse_spec(text))
    assert not isinstance(info.value, UserCodeError)


def test_name_clash_with_a_loaded_module(tmp_path: Path) -> None:
    path = write_module(tmp_path, "inspect.py", "Net = None\n")
    with pytest.raises(TargetError, match=r"as 'inspect': a different module of that name is already loaded"):
        import_target_module(parse_spec(f"{path}:Net"))
    assert "Net" not in vars(sys.modules["inspect"])  # the standard library module is untouched


# ----------------------------------------------------------- load_target: the model


def test_load_class_with_module_level_example_inputs() -> None:
    loaded = load(f"{SIMPLE}:Net")
    assert type(loaded.module).__name__ == "Net"
    assert loaded.inputs_source == "example_inputs()"
    assert len(loaded.input_sets) == 1
    assert describe_inputs(loaded.input_sets) == ("4:float32", "4:float32")
    assert torch.equal(loaded.input_sets[0][0], torch.arange(4.0))
    assert loaded.requires_grad  # Net has a parameter


def test_load_instance_uses_that_object() -> None:
    loaded = load(f"{SIMPLE}:model")
    assert loaded.module is sys.modules["simple_model"].model


def test_load_factory_function() -> None:
    loaded = load(f"{SIMPLE}:make_model")
    assert type(loaded.module).__name__ == "Block"
    assert not loaded.requires_grad  # no parameters, plain inputs


def test_factory_returning_something_else() -> None:
    expected = r"^make_number\(\) in assets/simple_model\.py returned int, not an nn\.Module$"
    with pytest.raises(TargetError, match=expected):
        load(f"{SIMPLE}:make_number")


def test_factory_that_raises() -> None:
    expected = r"^error while calling make_broken\(\): RuntimeError: factory failed$"
    with pytest.raises(UserCodeError, match=expected) as info:
        load(f"{SIMPLE}:make_broken")
    assert "simple_model.py" in info.value.user_traceback
    assert tool_frames(info.value.user_traceback) == []


def test_factory_that_needs_arguments() -> None:
    with pytest.raises(TargetError, match=r"must be callable with no arguments: make_with_args\(width\)"):
        load(f"{SIMPLE}:make_with_args")


def test_class_that_needs_arguments() -> None:
    with pytest.raises(TargetError) as info:
        load(f"{SIMPLE}:NeedsArgs")
    assert not isinstance(info.value, UserCodeError)
    assert "NeedsArgs in assets/simple_model.py must be constructible with no arguments" in info.value.message
    assert "NeedsArgs(width, depth=2)" in info.value.message
    assert info.value.hint is not None and "factory function" in info.value.hint


def test_class_whose_init_raises() -> None:
    expected = r"^error while constructing BadInit: ValueError: bad init$"
    with pytest.raises(UserCodeError, match=expected) as info:
        load(f"{SIMPLE}:BadInit")
    tb = info.value.user_traceback
    assert "simple_model.py" in tb and 'raise ValueError("bad init")' in tb
    assert tool_frames(tb) == []


def test_class_that_is_not_a_module() -> None:
    expected = "'NotAModule' in assets/simple_model.py is a class but not an nn.Module"
    with pytest.raises(TargetError, match=expected):
        load(f"{SIMPLE}:NotAModule")


def test_attribute_of_another_type() -> None:
    expected = r"'not_a_model' in assets/simple_model\.py is int, not an nn\.Module"
    with pytest.raises(TargetError, match=expected):
        load(f"{SIMPLE}:not_a_model")


def test_missing_attribute_lists_what_exists() -> None:
    with pytest.raises(TargetError) as info:
        load(f"{SIMPLE}:Nett")
    assert info.value.message == (
        "No attribute 'Nett' in assets/simple_model.py; "
        "nn.Module subclasses found: Net, Block, NeedsArgs, BadInit; instances: model; "
        "functions: make_model, make_number, make_broken, make_with_args"
    )
    assert info.value.hint == "did you mean assets/simple_model.py:Net?"


def test_missing_attribute_marks_an_imported_model_class(tmp_path: Path) -> None:
    write_module(tmp_path, "layers_lib.py", "import torch\nclass Norm(torch.nn.Module):\n    pass\n")
    path = write_module(tmp_path, "uses_lib.py", "import torch\nfrom layers_lib import Norm\n"
                        "class Block(torch.nn.Module):\n    pass\n")
    with pytest.raises(TargetError) as info:
        load(f"{path}:Nrom")
    assert "nn.Module subclasses found: Norm (imported), Block" in info.value.message
    assert info.value.hint.endswith(":Norm?")  # the name to type, without the mark


def test_missing_attribute_in_an_empty_module(tmp_path: Path) -> None:
    path = write_module(tmp_path, "empty_model.py", "import torch\nWIDTH = 4\n")
    expected = r"No attribute 'Net' in .*empty_model\.py; it defines no nn\.Module"
    with pytest.raises(TargetError, match=expected):
        load(f"{path}:Net")


def test_load_file_inside_a_package() -> None:
    loaded = load("assets/pkg/sub/model.py:Net")
    assert type(loaded.module).__module__ == "pkg.sub.model"
    assert "pkg.sub.layers" in sys.modules  # the relative import worked
    assert loaded.inputs_source == "example_inputs()"


@pytest.mark.parametrize("text", ["pkg.sub.model:Net", "simple_model:Net"])
def test_load_dotted_spec(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.chdir(ASSETS)
    loaded = load(text)
    assert type(loaded.module).__name__ == "Net"
    assert sys.path[0] == str(ASSETS)


# ------------------------------------------------------------ load_target: inputs


def test_inputs_string_wins_and_is_reproducible() -> None:
    first = load(f"{SIMPLE}:Net", inputs="4:fp16,4")
    second = load(f"{SIMPLE}:Net", inputs="4:fp16,4")
    assert first.inputs_source == "--inputs"
    assert describe_inputs(first.input_sets) == ("4:float16", "4:float32")
    assert all(torch.equal(a, b) for a, b in zip(first.input_sets[0], second.input_sets[0]))


def test_inputs_string_that_does_not_fit_forward() -> None:
    expected = r"^inputs do not fit Net\.forward\(x, y\): got 1 input \(from --inputs\)$"
    with pytest.raises(InputsError, match=expected):
        load(f"{SIMPLE}:Net", inputs="4")


def test_staticmethod_returning_one_tensor() -> None:
    loaded = load(f"{CLASSES}:StaticInputs")
    assert loaded.inputs_source == "StaticInputs.example_inputs()"
    assert describe_inputs(loaded.input_sets) == ("3:float32",)


def test_classmethod_returning_a_list_of_tensors_is_one_call() -> None:
    loaded = load(f"{CLASSES}:ClassInputs")
    assert loaded.inputs_source == "ClassInputs.example_inputs()"
    assert describe_inputs(loaded.input_sets) == ("2:float32", "2:float32")


def test_instance_method_is_called_bound() -> None:
    loaded = load(f"{CLASSES}:MethodInputs")
    assert torch.equal(loaded.input_sets[0][0], torch.full((5,), 7.0))


def test_plain_class_attribute() -> None:
    loaded = load(f"{CLASSES}:ValueInputs")
    assert loaded.inputs_source == "ValueInputs.example_inputs"
    assert describe_inputs(loaded.input_sets) == ("6:int64",)


def test_list_of_tuples_is_several_calls() -> None:
    loaded = load(f"{CLASSES}:ManyCalls")
    assert [describe_inputs([call]) for call in loaded.input_sets] == [("64:float32",), ("96:float32",)]


def test_one_call_of_several_does_not_fit() -> None:
    with pytest.raises(InputsError, match=r"ManyCallsOneWrong\.forward\(x\): call 2 of 2: got 2 inputs"):
        load(f"{CLASSES}:ManyCallsOneWrong")


def test_wrong_number_of_inputs() -> None:
    with pytest.raises(InputsError) as info:
        load(f"{CLASSES}:WrongArity")
    assert info.value.message == (
        "inputs do not fit WrongArity.forward(x, y): got 3 inputs (from WrongArity.example_inputs())"
    )
    assert "too many positional arguments" in (info.value.hint or "")


def test_varargs_forward_takes_any_inputs() -> None:
    assert len(load(f"{CLASSES}:VarArgs").input_sets[0]) == 3


def test_non_tensor_inputs_pass_through() -> None:
    loaded = load(f"{CLASSES}:IntArg")
    assert describe_inputs(loaded.input_sets) == ("64:float32", "3")


def test_no_example_inputs() -> None:
    with pytest.raises(InputsError) as info:
        load(f"{CLASSES}:NoInputs")
    assert info.value.message == (
        'No example inputs for NoInputs: pass --inputs "4x128:float16", define example_inputs() in '
        f"{CLASSES}, or add an example_inputs staticmethod to NoInputs"
    )


def test_example_inputs_that_raise() -> None:
    expected = r"^error in BrokenInputs\.example_inputs: RuntimeError: no data$"
    with pytest.raises(UserCodeError, match=expected) as info:
        load(f"{CLASSES}:BrokenInputs")
    assert "class_inputs_model.py" in info.value.user_traceback


def test_module_level_example_inputs_that_raise(tmp_path: Path) -> None:
    source = "import torch\nclass Net(torch.nn.Module):\n    pass\ndef example_inputs():\n    return 1 / 0\n"
    path = write_module(tmp_path, "raising_inputs_model.py", source)
    with pytest.raises(UserCodeError, match="^error in example_inputs: ZeroDivisionError"):
        load(f"{path}:Net")


@pytest.mark.parametrize(("name", "returned"), [("SetInputs", "set"), ("EmptyListInputs", "an empty list")])
def test_example_inputs_of_the_wrong_shape(name: str, returned: str) -> None:
    with pytest.raises(InputsError, match=f"^{name}.example_inputs\\(\\) returned {returned}"):
        load(f"{CLASSES}:{name}")


def test_a_dict_of_example_inputs_is_a_call_by_keyword() -> None:
    (call,) = load(f"{CLASSES}:DictInputs").input_sets
    assert call == () and list(call.kwargs) == ["x"]


# ----------------------------------------------------- load_target: device and grad


def test_input_that_requires_grad_comes_back_as_a_leaf() -> None:
    loaded = load(f"{CLASSES}:GradInputs")
    (x,) = loaded.input_sets[0]
    assert x.requires_grad and x.is_leaf
    assert loaded.requires_grad
    assert not list(loaded.module.parameters())


def test_nothing_requires_grad() -> None:
    assert not load(f"{CLASSES}:Frozen").requires_grad


def test_move_to_device_keeps_aliasing_and_nesting() -> None:
    loaded = load(f"{CLASSES}:Aliased", device="meta")
    x, y, pair = loaded.input_sets[0]
    assert x is y and pair[0] is x and isinstance(pair, list)
    assert {t.device.type for t in (x, y, *pair)} == {"meta"}


def test_model_is_moved_to_the_device() -> None:
    loaded = load(f"{CLASSES}:Frozen", device="meta")
    assert {p.device.type for p in loaded.module.parameters()} == {"meta"}
    assert loaded.input_sets[0][0].device.type == "meta"


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_without_a_gpu() -> None:
    with pytest.raises(EnvironmentProblem, match="no CUDA GPU"):
        load(f"{CLASSES}:Frozen", device="cuda")


def test_bad_device_name() -> None:
    with pytest.raises(TargetError, match="Bad device 'gpu0'"):
        load(f"{CLASSES}:Frozen", device="gpu0")


def test_format_user_traceback_of_a_plain_exception() -> None:
    try:
        raise KeyError("k")
    except KeyError as exc:
        text = format_user_traceback(exc)
    assert "test_target.py" in text and text.rstrip().endswith("KeyError: 'k'")
