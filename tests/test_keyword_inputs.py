"""example_inputs() returning keyword inputs: a dict is one call `model(**inputs)`, a list of dicts one
call each (capture/calls.py `Call`), through loading, capture, the inputs line and export."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tritoninspect.capture.calls import Call, call_with, every_input, keywords
from tritoninspect.model.errors import InputsError
from tritoninspect.source.target import load_target, parse_spec

ASSETS = Path(__file__).resolve().parent / "assets"
MODEL = ASSETS / "keyword_inputs_model.py"


def write_model(tmp_path: Path, forward: str, inputs: str) -> Path:
    path = tmp_path / f"kw_{abs(hash((forward, inputs)))}.py"
    path.write_text(
        "import torch\n\n"
        "class Net(torch.nn.Module):\n"
        f"    def forward({forward}):\n"
        "        return x\n\n"
        "def example_inputs():\n"
        f"    return {inputs}\n")
    return path


def loaded_calls(path: Path) -> list[tuple]:
    return load_target(parse_spec(str(path))).input_sets


def test_a_call_is_its_positional_tuple_with_keywords_beside() -> None:
    call = Call((1, 2), {"k": 3})
    assert call == (1, 2) and keywords(call) == {"k": 3} and keywords((1, 2)) == {}
    assert list(every_input(call)) == [1, 2, 3]
    assert call_with(lambda *a, **k: (a, k), call) == ((1, 2), {"k": 3})
    import pickle

    again = pickle.loads(pickle.dumps(call))
    assert type(again) is Call and again == call and again.kwargs == {"k": 3}


def test_a_dict_is_one_call_by_keyword(tmp_path: Path) -> None:
    path = write_model(tmp_path, "self, x, mask=None", '{"x": torch.ones(2), "mask": torch.zeros(2)}')
    (call,) = loaded_calls(path)
    assert call == () and sorted(keywords(call)) == ["mask", "x"]


def test_a_list_of_dicts_is_one_call_each(tmp_path: Path) -> None:
    path = write_model(tmp_path, "self, x", '[{"x": torch.ones(2)}, {"x": torch.ones(3)}]')
    calls = loaded_calls(path)
    assert [keywords(c)["x"].shape[0] for c in calls] == [2, 3]


def test_a_list_of_tuples_and_dicts_is_one_call_each(tmp_path: Path) -> None:
    path = write_model(tmp_path, "self, x, y=None", '[(torch.ones(3),), {"x": torch.ones(3), "y": torch.ones(3)}]')
    first, second = loaded_calls(path)
    assert len(first) == 1 and keywords(first) == {} and second == () and sorted(keywords(second)) == ["x", "y"]


def test_dicts_forward_takes_positionally_stay_one_call(tmp_path: Path) -> None:
    """Before keyword inputs, a list of two dicts was one call with two dict arguments: a forward that
    takes them so keeps that meaning."""
    path = write_model(tmp_path, "self, x, y", '[{"a": torch.ones(2)}, {"b": torch.ones(2)}]')
    (call,) = loaded_calls(path)
    assert len(call) == 2 and keywords(call) == {}


def test_keywords_that_do_not_fit_forward_are_refused_by_name(tmp_path: Path) -> None:
    path = write_model(tmp_path, "self, x", '{"x": torch.ones(2), "mask": torch.ones(2)}')
    with pytest.raises(InputsError, match=r"got keyword inputs x, mask") as caught:
        loaded_calls(path)
    assert "mask" in (caught.value.hint or "")


def test_a_key_that_is_no_keyword_is_refused(tmp_path: Path) -> None:
    path = write_model(tmp_path, "self, x", '{0: torch.ones(2)}')
    with pytest.raises(InputsError, match=r"dict with the key 0"):
        loaded_calls(path)


def test_keyword_tensors_count_for_grad_and_move_with_their_marks(tmp_path: Path) -> None:
    path = write_model(tmp_path, "self, x",
                       '{"x": (lambda t: (torch._dynamo.mark_dynamic(t, 0), t)[1])(torch.ones(4, requires_grad=True))}')
    loaded = load_target(parse_spec(str(path)))
    assert loaded.requires_grad
    (call,) = loaded.input_sets
    assert keywords(call)["x"].requires_grad and 0 in getattr(keywords(call)["x"], "_dynamo_dynamic_indices", ())


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tritoninspect", *args], capture_output=True, text=True,
                          timeout=600, cwd=ASSETS)


def test_graph_of_a_model_called_by_keyword() -> None:
    """The kernel the mask launches is seen (it is not launched without the keyword), the inputs line names
    each keyword, and the report's kernels are those of the same call made positionally."""
    by_keyword = run_cli("graph", f"{MODEL}:Net", "--json")
    assert by_keyword.returncode == 0, by_keyword.stderr
    report = json.loads(by_keyword.stdout)
    assert report["meta"]["inputs"] == ["input_ids=2x16:float32", "attention_mask=2x16:float32", "scale=2.0"]
    positional = run_cli("graph", f"{MODEL}:Net", "--json", "--inputs", "2x16, 2x16")
    assert positional.returncode == 0, positional.stderr
    def kernels(done: subprocess.CompletedProcess[str]) -> list[tuple]:
        return [(k["name"], k["entries"], [o["compile_id"] for o in k["occurrences"]])
                for k in json.loads(done.stdout)["kernels"]]

    assert kernels(by_keyword) == kernels(positional)
    assert [(name, entries) for name, entries, _ in kernels(by_keyword)] == [("masked_scale_kernel", ["hop"])]


def test_inspect_module_takes_a_dict(tmp_path: Path) -> None:
    from tritoninspect import inspect_module

    sys.path.insert(0, str(ASSETS))
    try:
        import keyword_inputs_model as m
    finally:
        sys.path.remove(str(ASSETS))
    report = inspect_module(m.Net(), m.example_inputs(), stage="dynamo", progress=False)
    assert report.meta.inputs[1] == "attention_mask=2x16:float32"
    assert [k.name for k in report.kernels] == ["masked_scale_kernel"]


def test_export_passes_keywords_as_kwargs() -> None:
    """torch.export gets the dict as its kwargs (and, with --dynamic, Dim.AUTO by parameter name)."""
    done = run_cli("export", f"{MODEL}:Net", "--strict", "--stage", "export", "--dynamic", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["failure"] is None
    user = [s["name"] for s in report["export"]["signature"] if s["kind"] == "USER_INPUT"]
    assert user == ["input_ids", "attention_mask", "scale"]
    assert {(d["input"], d["requested"]) for d in report["export"]["dynamic_dims"]} == {
        ("input_ids", "auto"), ("attention_mask", "auto")}
