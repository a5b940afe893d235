"""Target loading added by issue 14: `model.py` alone, the class's own example_inputs first, `=VALUE` inputs."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from tritoninspect.model.errors import ExitCode, InputsError, TargetError, UsageError
from tritoninspect.source.inputs import parse_inputs
from tritoninspect.source.spec import parse_spec
from tritoninspect.source.target import load_target, make_inputs

TESTS = Path(__file__).parent
ASSETS = TESTS / "assets"


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if (getattr(sys.modules[name], "__file__", None) or "").startswith((str(tmp_path), str(ASSETS))):
            del sys.modules[name]


def write(tmp_path: Path, name: str, source: str) -> str:
    (tmp_path / name).write_text(source)
    return name


ONE = "import torch\nclass Only(torch.nn.Module):\n    def forward(self, x):\n        return x\n" \
      "def example_inputs():\n    return (torch.ones(3),)\n"


def test_a_file_alone_picks_its_only_module(tmp_path: Path) -> None:
    spec = parse_spec(write(tmp_path, "one.py", ONE + "from torch.nn import Linear\n"))
    assert (spec.attr, spec.display_name, spec.name) == ("", "one.py", "one.py")
    loaded = load_target(spec)
    assert type(loaded.module).__name__ == "Only" and loaded.spec.name == "one.py:Only"


def test_a_file_with_several_modules_lists_them_in_one_line(tmp_path: Path) -> None:
    name = write(tmp_path, "two.py", ONE + "class Other(Only):\n    pass\n")
    with pytest.raises(UsageError) as info:
        load_target(parse_spec(name))
    assert info.value.message == "two.py defines 2 nn.Module subclasses (Only, Other); name one, e.g. two.py:Only"
    assert info.value.exit_code == ExitCode.USAGE and "\n" not in info.value.message


def test_a_file_without_modules_is_a_wrong_target(tmp_path: Path) -> None:
    """Exit 3, as docs/commands/index.md says of a wrong file (it was a usage error, 2: hostile, finding K a);
    the hint names what `:NAME` could name."""
    with pytest.raises(TargetError) as info:
        load_target(parse_spec(write(tmp_path, "none.py", "X = 1\n")))
    assert info.value.message == "none.py defines no nn.Module subclass; name the model to inspect: none.py:NAME"
    assert info.value.exit_code == ExitCode.TARGET and info.value.hint is None
    factory = "import torch\nfrom torch.nn import Linear\nmodel = Linear(2, 2)\ndef make():\n    return Linear(2, 2)\n"
    with pytest.raises(TargetError) as info:
        load_target(parse_spec(write(tmp_path, "factory.py", factory)))
    assert info.value.hint == "it holds instances: model; functions: make"


def test_every_command_exits_3_for_a_file_without_modules(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tritoninspect.cli import app

    none = write(tmp_path, "none.py", "X = 1\n")
    for command in (["graph"], ["breaks"], ["check"], ["export"], ["diff", none]):
        result = CliRunner().invoke(app, [*command, none])
        assert result.exit_code == ExitCode.TARGET, (command, result.output)
        assert "defines no nn.Module subclass" in result.stderr and "Traceback" not in result.output


def test_the_class_inputs_beat_the_module_level_ones() -> None:
    loaded = load_target(parse_spec(f"{ASSETS / 'simple_model.py'}:Block"))
    assert loaded.inputs_source == "Block.example_inputs()"
    assert [tuple(t.shape) for t in loaded.input_sets[0]] == [(2,), (2,)]
    net = load_target(parse_spec(f"{ASSETS / 'simple_model.py'}:Net"))
    assert net.inputs_source == "example_inputs()"  # Net has none of its own


def test_inputs_set_values() -> None:
    specs = parse_inputs("64,scalar:i64=8,2:bool=true,3:fp16=0.5")
    assert [str(s) for s in specs] == ["64:float32", "scalar:int64=8", "2:bool=True", "3:float16=0.5"]
    x, n, flags, half = make_inputs(specs)
    assert x.shape == (64,) and n.item() == 8 and n.dtype == torch.int64 and n.dim() == 0
    assert flags.tolist() == [True, True] and half.tolist() == [0.5, 0.5, 0.5]


@pytest.mark.parametrize("text", ["scalar:i64=", "scalar:i64=x", "4:bool=2", "4=1=2"])
def test_bad_values_are_one_inputs_error(text: str) -> None:
    with pytest.raises(InputsError, match="bad"):
        parse_inputs(text)


@pytest.mark.parametrize("text", ["64:i64=99999999999999999999999", "64:i8=300", "64:uint8=-1", "scalar:i32=2147483648"])
def test_values_out_of_the_dtypes_range_are_one_inputs_error(text: str) -> None:
    with pytest.raises(InputsError, match="does not fit"):
        parse_inputs(text)
    assert parse_inputs("4:i8=-128")[0].value == -128  # the bounds themselves fit


# --- tensor-subclass inputs (hostile, finding K g) ------------------------------------------------


class _Int8Tensor(torch.Tensor):
    """A torchao-style wrapper subclass: int8 data and a scale, seen from outside as float32."""

    @staticmethod
    def __new__(cls, qdata: torch.Tensor, scale: torch.Tensor) -> _Int8Tensor:
        return torch.Tensor._make_wrapper_subclass(cls, qdata.shape, dtype=scale.dtype, device=qdata.device)

    def __init__(self, qdata: torch.Tensor, scale: torch.Tensor) -> None:
        self.qdata, self.scale = qdata, scale

    def __tensor_flatten__(self) -> tuple[list[str], None]:
        return ["qdata", "scale"], None

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        if func is torch.ops.aten.detach.default:
            return _Int8Tensor(args[0].qdata.detach(), args[0].scale.detach())
        unwrap = lambda t: t.qdata.float() * t.scale[:, None] if isinstance(t, _Int8Tensor) else t  # noqa: E731
        return func(*torch.utils._pytree.tree_map(unwrap, args), **torch.utils._pytree.tree_map(unwrap, kwargs or {}))


class _Broken(_Int8Tensor):
    def __tensor_flatten__(self) -> tuple[list[str], None]:
        raise RuntimeError("not today")


def test_a_tensor_subclass_input_is_described_with_its_class_and_what_it_wraps() -> None:
    """The inputs line read `16x32:float32` for a torchao-style int8 tensor, as for a plain float tensor."""
    from tritoninspect.source.inputs import describe_inputs

    q = _Int8Tensor(torch.zeros(16, 32, dtype=torch.int8), torch.ones(16))
    broken = _Broken(torch.zeros(2, 2, dtype=torch.int8), torch.ones(2))
    param = torch.nn.Parameter(torch.zeros(3))
    assert describe_inputs([(torch.zeros(4), q, broken, param)]) == (
        "4:float32", "16x32:float32 (_Int8Tensor: qdata 16x32:int8, scale 16:float32)", "2x2:float32 (_Broken)",
        "3:float32")


def test_a_tensor_subclass_input_reaches_the_model_and_the_inputs_line_as_itself(tmp_path: Path) -> None:
    source = ("import torch\nfrom test_target_more import _Int8Tensor\n"
              "class Net(torch.nn.Module):\n    def forward(self, x, w):\n        return x @ w.t()\n"
              "def example_inputs():\n    return (torch.zeros(4, 32), _Int8Tensor(torch.zeros(16, 32, dtype=torch.int8), torch.ones(16)))\n")
    loaded = load_target(parse_spec(f"{write(tmp_path, 'quantized.py', source)}:Net"), device="cpu")
    assert type(loaded.input_sets[0][1]) is _Int8Tensor
    from tritoninspect.source.inputs import describe_inputs

    assert describe_inputs(loaded.input_sets)[1] == "16x32:float32 (_Int8Tensor: qdata 16x32:int8, scale 16:float32)"


class _Unwrapping(torch.Tensor):
    """A wrapper subclass without `__tensor_flatten__` whose dispatch returns plain tensors: its detach() is one."""

    @staticmethod
    def __new__(cls, inner: torch.Tensor) -> _Unwrapping:
        return torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype, device=inner.device)

    def __init__(self, inner: torch.Tensor) -> None:
        self.inner = inner

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        unwrap = lambda t: t.inner if isinstance(t, _Unwrapping) else t  # noqa: E731
        return func(*torch.utils._pytree.tree_map(unwrap, args), **torch.utils._pytree.tree_map(unwrap, kwargs or {}))


def test_a_subclass_whose_detach_unwraps_it_reaches_the_model_as_itself(tmp_path: Path) -> None:
    """Copied with detach() it reached the model as a plain tensor: Dynamo's graph break on it (explain: 2 graphs,
    1 break) was missing from the report (hostile, finding A)."""
    source = ("import torch\nfrom test_target_more import _Unwrapping\n"
              "class Net(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"
              "def example_inputs():\n    return (_Unwrapping(torch.ones(4)),)\n")
    spec = parse_spec(f"{write(tmp_path, 'unwrapping.py', source)}:Net")
    loaded = load_target(spec, device="cpu")
    assert type(loaded.input_sets[0][0]) is _Unwrapping
    with pytest.raises(InputsError, match="an example input is a _Unwrapping on cpu whose detach.* create it on meta"):
        load_target(spec, device="meta")


META_INPUT = "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x.sin()\n" \
             "def example_inputs():\n    return (torch.ones(4, device='meta'),)\n"
META_WEIGHT = "import torch\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n" \
              "        self.lin = torch.nn.Linear(4, 4, device='meta')\n    def forward(self, x):\n" \
              "        return self.lin(x)\ndef example_inputs():\n    return (torch.ones(4),)\n"


@pytest.mark.parametrize(("source", "error", "says"), [
    (META_INPUT, InputsError, "example_inputs() gave a meta tensor"),
    (META_WEIGHT, TargetError, "Net.lin.weight is on the meta device"),
])
def test_meta_tensors_are_a_wrong_target_not_an_internal_error(tmp_path: Path, source: str, error: type,
                                                               says: str) -> None:
    """A meta tensor has no data to run the model on: copying the inputs to the device raised
    NotImplementedError (exit 6), the model's `.to()` said the machine could not (exit 5)."""
    with pytest.raises(error) as info:
        load_target(parse_spec(write(tmp_path, "meta.py", source)))
    assert says in info.value.message and info.value.exit_code == ExitCode.TARGET
