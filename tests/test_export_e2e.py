"""`tritoninspect export` end to end on CPU (compile-only mode, tier c, slow): the samples really
exported, in fresh interpreters, a few at a time. Most stop after torch.export (`--stage export`);
two build AOTInductor on CPU, which takes a minute each on a 2-core machine.
The same runs on the GPU: tests/gpu/test_gpu_export.py and scripts/gpu-export.
"""

from __future__ import annotations

from typing import Any

import pytest

from _expect import CliRuns, explain, json_report
from tritoninspect.model.errors import ExitCode

pytestmark = pytest.mark.slow

STAGE = ["--stage", "export", "--json"]
RUNS = {
    "raw strict": ["samples/add_raw.py:Net", "--strict", *STAGE],
    "raw default": ["samples/add_raw.py:Net", *STAGE],
    "triton_op": ["samples/triton_op.py:Net", *STAGE],
    "custom_op": ["samples/custom_op.py:Net", "--strict", *STAGE],
    "trio custom_op": ["samples/trio.py:CustomOpNet", *STAGE],
    "dynamic": ["samples/export_dynamic.py:Net", "--dynamic", *STAGE],
    "dynamic raw": ["samples/export_dynamic.py:RawNet", "--dynamic", "--strict", *STAGE],
    "no fake": ["tests/assets/export_nofake.py:Net", *STAGE],
    "named constexpr dim": ["tests/assets/export_constexpr_dim.py:Net", "--dynamic", *STAGE],
    "buffer": ["tests/assets/export_buffer.py:Net", "--strict", *STAGE],
    "bad shapes hook": ["tests/assets/export_bad_shapes.py:Net", "--dynamic", "--stage", "export"],
    "aoti custom_op": ["samples/custom_op.py:Net", "--json"],
    "aoti raw": ["samples/add_raw.py:Net", "--strict", "--json"],
}


@pytest.fixture(scope="module")
def runs() -> Any:
    cli = CliRuns(workers=2)
    for key, args in RUNS.items():
        cli.submit(key, ["export", *args, "--device", "cpu"])
    yield cli
    cli.close()


def export_of(runs: Any, key: str) -> dict[str, Any]:
    return json_report(runs.get(key))


def failed(runs: Any, key: str) -> dict[str, Any]:
    import json

    proc = runs.get(key)
    assert proc.returncode == ExitCode.USER_CODE, explain(proc)
    return json.loads(proc.stdout)


def kernel(report: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [k for k in report["export"]["kernels"] if k["name"] == name]
    return found


def test_each_entry_kind_appears_in_the_exported_program_as_documented(runs: Any) -> None:
    raw = export_of(runs, "raw strict")
    assert kernel(raw, "add_kernel")["appears_as"] == "hop"
    assert "triton_kernel_wrapper_mutation" in raw["graphs"][0]["code"]
    assert raw["export"]["strict"] and raw["export"]["strict_source"] == "--strict"
    op = export_of(runs, "triton_op")
    assert (kernel(op, "add_kernel")["appears_as"], kernel(op, "add_kernel")["op"]) == ("triton_op", "tisample_triton_op::add")
    assert "triton_kernel_wrapper" not in op["graphs"][0]["code"]  # export keeps the triton_op an op
    assert op["export"]["strict_source"] == "torch default"
    for key in ("custom_op", "trio custom_op"):
        report = export_of(runs, key)
        assert kernel(report, "add_kernel")["appears_as"] == "custom_op"
        assert report["opaque_ops"][0]["kernels"] == ["add_kernel"]
    signature = {(s["direction"], s["kind"]) for s in raw["export"]["signature"]}
    assert signature == {("input", "USER_INPUT"), ("output", "USER_OUTPUT")}


def test_raw_launch_fails_non_strict_export_with_its_hint(runs: Any) -> None:
    report = failed(runs, "raw default")
    assert report["failure"]["stage"] == "export"
    (finding,) = report["export"]["findings"]
    assert (finding["cause"], finding["kernel"]) == ("raw_launch_non_strict", "add_kernel")


def test_custom_op_without_fake_fails_with_its_hint(runs: Any) -> None:
    report = failed(runs, "no fake")
    assert [f["cause"] for f in report["export"]["findings"]] == ["custom_op_without_fake"]


def test_constexpr_specialises_the_dynamic_row_width(runs: Any) -> None:
    for key in ("dynamic", "dynamic raw"):
        dims = {(d["input"], d["dim"]): d for d in export_of(runs, key)["export"]["dynamic_dims"]}
        assert not dims[("x", 0)]["specialised"] and not dims[("x", 0)]["exported"].isdigit(), key
        assert dims[("x", 1)]["specialised"] and dims[("x", 1)]["exported"] == "48", key
        constraints = {c["arg"]: c["effect"] for c in export_of(runs, key)["export"]["constraints"]}
        assert constraints == {"N_COLS": "specialised", "n_rows": "symbolic"}, key
    report = failed(runs, "named constexpr dim")
    (finding,) = report["export"]["findings"]
    assert (finding["cause"], finding["kernel"]) == ("constexpr_specialises_dynamic_dim", "row_scale_kernel")


def test_compile_only_aoti_builds_a_cpu_package_for_a_custom_op_and_says_so(runs: Any) -> None:
    aoti = export_of(runs, "aoti custom_op")["export"]["aoti"]
    assert (aoti["status"], aoti["loaded"], aoti["matches_eager"]) == ("built", True, True)
    assert aoti["device"] == "cpu (compile-only mode)" and aoti["notes"]
    assert any(f.endswith(".wrapper.cpp (%s bytes)" % f.split("(")[1].split()[0]) for f in aoti["files"])
    # Loaded in a child with the C++ compiler's libstdc++ preloaded (issue 22 item 6; none without a compiler).
    from tritoninspect.capture.compat.cxx_runtime import compiler_libstdcxx

    runtime = compiler_libstdcxx()
    said = [n for n in aoti["notes"] if "libstdc++" in n]
    assert len(said) == 1 and (f"LD_PRELOAD={runtime}" in said[0] if runtime else "none preloaded" in said[0]), said


def test_compile_only_aoti_cannot_build_a_raw_kernel_but_shows_its_code(runs: Any) -> None:
    report = export_of(runs, "aoti raw")
    aoti = report["export"]["aoti"]
    assert aoti["status"] == "unavailable" and aoti["loaded"] is None and "no package ran" in aoti["notes"][0]
    assert report["failure"] is None
    code = [g["code"] for g in report["graphs"] if g["stage"] == "aoti_output_code"]
    assert code and "add_kernel" in code[0]


def test_a_raising_dynamic_shapes_hook_is_the_users_code_failing_exit_4(runs: Any) -> None:
    # As example_inputs() raising: one error line, exit 4, the user's own traceback apart.
    proc = runs.get("bad shapes hook")
    assert proc.returncode == ExitCode.USER_CODE, explain(proc)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "export_dynamic_shapes(): ValueError: no shapes today" in errors[0]
    assert "traceback from your code" in proc.stderr and "export_bad_shapes.py" in proc.stderr
    assert proc.stdout == ""


def test_a_kernel_write_to_a_buffer_is_a_mutation_only_after_decompositions(runs: Any) -> None:
    info = export_of(runs, "buffer")["export"]
    kinds = {(s["direction"], s["kind"], s["target"]) for s in info["signature"]}
    assert ("input", "BUFFER", "acc") in kinds and not any("MUTATION" in k for _, k, _ in kinds)
    decomposed = {(s["kind"], s["target"]) for s in info["decomposed_signature"] if s["direction"] == "output"}
    assert ("BUFFER_MUTATION", "acc") in decomposed
    assert kernel({"export": info}, "accumulate_kernel")["writes"] == ["acc_ptr"]
