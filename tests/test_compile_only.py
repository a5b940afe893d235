"""Compile-only mode (issue 12, items 1 and 2): the CUDA device queries it answers for its
emulated GPU, and the real Triton compile of every user-kernel launch.

Fast tests enter `compile_only()` in process and compile small kernels; slow ones run test
assets through the CLI: queries at import and in forward, kernels Triton cannot compile, a
cold-cache `--resources` run, and a kernel library (fla) that probes the device at import.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from _expect import REPO, CliRuns, cli_env, explain, json_report, line_of
from tritoninspect.analyse import build_report
from tritoninspect.analyse.emulation import emulation_notes
from tritoninspect.capture import compat
from tritoninspect.capture.compat.device_queries import emulated_gpu
from tritoninspect.capture.failure import Progress, failure_record, raised_in_tool
from tritoninspect.model.records import Capture, DeviceQueryRecord, EmulationRecord, Failure
from tritoninspect.capture.session import compile_only
from tritoninspect.model.errors import ExitCode
from tritoninspect.render.terminal import TerminalRenderer

ASSETS = REPO / "tests" / "assets"
FAILURES = ASSETS / "failures"
QUERIES = ("get_device_capability", "get_device_name", "get_device_properties", "current_device", "device_count")


def _line(path: Path, marker: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if marker in line)


def _load(path: Path) -> Any:
    """Import a test asset as a module (inside compile_only() when it probes the device)."""
    name = f"_ti_asset_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


# --- the emulated device (fast) ----------------------------------------------------------------


def test_sm_90_is_an_h100_and_sm_80_an_a100() -> None:
    h100, a100 = emulated_gpu(90), emulated_gpu(80)
    assert (h100.like, h100.properties.name, h100.properties.major, h100.properties.minor) == (
        "H100", "NVIDIA H100 80GB HBM3", 9, 0)
    assert (h100.properties.multi_processor_count, h100.properties.shared_memory_per_block_optin) == (132, 232_448)
    assert (a100.like, a100.properties.multi_processor_count, a100.properties.major) == ("A100", 108, 8)
    assert h100.triton_properties()["max_shared_mem"] == 232_448
    assert not hasattr(h100.properties, "uuid")


def test_an_unknown_arch_keeps_its_capability_and_says_whose_values() -> None:
    gpu = emulated_gpu(100)
    assert (gpu.like, gpu.properties.major, gpu.properties.minor) == ("H100", 10, 0)
    assert "sm_100" in gpu.properties.name and "H100 values" in gpu.properties.name
    assert emulated_gpu(75).like == "A100"


def test_queries_are_answered_counted_and_restored() -> None:
    originals = {name: getattr(torch.cuda, name) for name in QUERIES}
    cuda_version = torch.version.cuda  # None on a CPU build; a CUDA build on a machine without a GPU names its CUDA
    with compile_only(80) as env:
        assert torch.cuda.get_device_capability() == (8, 0)
        assert torch.cuda.get_device_capability("cuda:0") == (8, 0)
        assert torch.cuda.get_device_name(torch.device("cuda")) == "NVIDIA A100-SXM4-80GB"
        props = torch.cuda.get_device_properties(0)
        assert (props.multi_processor_count, props.warp_size, props.L2_cache_size) == (108, 32, 41_943_040)
        assert (torch.cuda.current_device(), torch.cuda.device_count()) == (0, 1)
        assert torch.cuda.is_available() is False
        assert torch.version.cuda == cuda_version  # left as it is (device_queries.patches)
        # A CPU tensor's device stands for the GPU's (mamba-ssm's `get_device_properties(x.device)`)
        assert torch.cuda.get_device_properties(torch.zeros(1).device).multi_processor_count == 108
        with pytest.raises(ValueError, match="Expected a cuda device"):
            torch.cuda.get_device_properties(torch.device("meta"))
        with pytest.raises(AssertionError, match="one CUDA device"):
            torch.cuda.get_device_name(1)
        with pytest.raises(AssertionError, match="compile-only mode cannot create CUDA tensors: .*test_compile_only"):
            torch.empty(1, device="cuda")  # allocation stays honest, and says who asked
    assert {name: getattr(torch.cuda, name) for name in QUERIES} == originals
    # torch's own answer again: a CPU build's, or a CUDA build's on a machine without a GPU
    with pytest.raises((AssertionError, RuntimeError), match="not compiled with CUDA|no NVIDIA driver"):
        torch.cuda.get_device_name()
    record = env.emulation()
    assert record is not None and (record.target, record.like) == ("sm_80", "A100")
    calls = {q.function: q.calls for q in record.queries}
    assert calls == {"get_device_capability": 2, "get_device_name": 2, "get_device_properties": 3,
                     "current_device": 1, "device_count": 1}
    here = f"{__file__}:"
    assert all(q.first_caller and q.first_caller.startswith(here) for q in record.queries)


def test_a_fake_cuda_tensor_the_user_asks_for_is_refused_naming_the_line() -> None:
    """Dynamo traces an allocation on fake tensors: a fake CUDA tensor then reached torch's C++,
    which aborted the process (triformer's TritonRMSNorm). torch's own fake CUDA tensors pass."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    if torch.cuda.is_available():
        pytest.skip("a GPU is here: compile-only mode allocates the CUDA tensor for real")
    with compile_only():
        with FakeTensorMode(), pytest.raises(compat.no_cuda.NoCudaDevice) as refused:
            torch.empty(4, device="cuda:0")  # ASKS-FOR-CUDA
    assert refused.value.where == f"{__file__}:{_line(Path(__file__), '# ASKS-FOR' + '-CUDA')} in " \
        "test_a_fake_cuda_tensor_the_user_asks_for_is_refused_naming_the_line"
    assert "asks for a tensor on 'cuda:0'" in str(refused.value)
    with FakeTensorMode():
        assert torch.empty(4, device="cuda:0").device.type == "cuda"  # the mode is gone: torch's fake tensors


def test_dynamo_forgets_the_stand_ins_on_exit() -> None:
    from torch._dynamo import trace_rules
    from torch._dynamo.variables import torch as torch_variables

    with compile_only():
        stand_ins = [getattr(torch.cuda, name) for name in QUERIES]
        assert all(trace_rules.is_callable_allowed(f) for f in stand_ins)
        assert torch.cuda.get_device_properties in torch_variables.constant_fold_functions
    assert not any(trace_rules.is_callable_allowed(f) for f in stand_ins)
    assert not any(f in torch_variables.constant_fold_functions for f in stand_ins)


def test_the_triton_driver_answers_device_properties() -> None:
    import triton

    with compile_only() as env:
        props = triton.runtime.driver.active.utils.get_device_properties(0)
    assert props["multiprocessor_count"] == 132 and props["max_shared_mem"] == 232_448
    assert env.emulation().queries[0].function == "triton.runtime.driver.active.utils.get_device_properties"


def test_the_note_lists_each_query_with_its_first_caller(tmp_path: Path) -> None:
    site = "/venv/lib/python3.11/site-packages/"
    capture = Capture(meta={"mode": "compile-only"}, emulation=EmulationRecord("sm_90", "H100", "NVIDIA H100", (
        DeviceQueryRecord("get_device_name", 2, f"{site}fla/ops/utils/cache.py:88"),
        DeviceQueryRecord("get_device_capability", 5, f"{tmp_path}/model.py:12"),
    )))
    (note,) = emulation_notes(capture, cwd=tmp_path)
    assert (note.severity, note.source) == ("note", "compile-only")
    assert note.message.startswith('emulated CUDA device queries for sm_90 (H100-like, "NVIDIA H100"): ')
    assert "get_device_name ×2 (fla/ops/utils/cache.py:88), get_device_capability ×5 (model.py:12)" in note.message
    assert "not from a GPU" in note.message
    assert emulation_notes(dataclasses.replace(capture, emulation=None)) == []
    assert emulation_notes(Capture(emulation=EmulationRecord("sm_90", "H100", "NVIDIA H100"))) == []


def test_the_emulation_and_the_failed_kernel_round_trip_in_a_saved_capture() -> None:
    emulation = EmulationRecord("sm_90", "H100", "NVIDIA H100 80GB HBM3", (DeviceQueryRecord("device_count", 1, None),))
    failure = Failure("kernel_compile", None, "", "CompilationError", "at 1:0:\nNameError('x')", kernel="k")
    capture = Capture(emulation=emulation, failure=failure)
    again = Capture.from_json(capture.to_json())
    assert (again.emulation, again.failure) == (emulation, failure)
    assert "emulation" not in json.loads(Capture().to_json())


# --- real compiles of launches (fast) ----------------------------------------------------------


def _compile_error(asset: Path, kernel: str, args: dict[str, Any]) -> BaseException:
    with compile_only():
        module = _load(asset)
        compiler = compat.triton_compile.LaunchCompiler(on_problem=pytest.fail)
        try:
            compiler.compile(getattr(module, kernel), args, {})
        except Exception as exc:  # noqa: BLE001 - the test looks at it
            return exc
        finally:
            compiler.close()
    raise AssertionError(f"{kernel} compiled")


def test_a_kernel_that_cannot_compile_is_a_kernel_compile_failure_at_its_line() -> None:
    asset = FAILURES / "undefined_name_kernel.py"
    x = torch.randn(64)
    exc = _compile_error(asset, "scale_kernel", {"x_ptr": x, "out_ptr": x, "n": 64, "BLOCK": 16})
    record = failure_record(exc, Progress())
    assert (record.stage, record.exc_type, record.kernel) == ("kernel_compile", "CompilationError", "scale_kernel")
    assert record.user_frame == f"{asset}:{_line(asset, 'ERROR-LINE')} in scale_kernel"
    lines = record.message.splitlines()
    assert lines[0].startswith("at ") and "undefined_scale" in lines[-1] and len(lines) > 3  # Triton's whole message
    assert not raised_in_tool(exc)


def test_a_non_constexpr_arange_bound_does_not_compile() -> None:
    asset = FAILURES / "runtime_arange_kernel.py"
    x = torch.randn(64)
    record = failure_record(_compile_error(asset, "copy_kernel", {"x_ptr": x, "out_ptr": x, "n": 64, "block": 16}),
                            Progress())
    assert record.kernel == "copy_kernel"
    assert record.user_frame == f"{asset}:{_line(asset, 'ERROR-LINE')} in copy_kernel"
    assert record.message.splitlines()[-1] == "arange's arguments must be of type tl.constexpr"


def test_the_failure_headline_is_triton_s_last_line() -> None:
    report = build_report(Capture(meta={"mode": "compile-only"}, failure=Failure(
        "kernel_compile", None, "", "CompilationError", "at 2:4:\ndef k(x):\n    y\n    ^\nNameError('y')", kernel="k")))
    assert report.failure.headline() == "NameError('y')"
    assert report.failure.details() == ["at 2:4:", "def k(x):", "    y", "    ^"]
    text = TerminalRenderer(width=120, color=False).render(report)
    assert "FAILED while Triton compiled a kernel: CompilationError: NameError('y')" in text
    assert "kernel: k" in text


def test_a_launch_compiles_once_per_specialisation_into_compile_only_s_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import triton

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))  # not the user's cache
    asset = ASSETS / "row_softmax.py"
    with compile_only():
        kernel = _load(asset).row_softmax_kernel
        compiler = compat.triton_compile.LaunchCompiler(on_problem=pytest.fail)
        try:
            x = torch.randn(4, 48)
            first = compiler.compile(kernel, {"x_ptr": x, "out_ptr": x, "stride": 48, "n_cols": 48, "BLOCK": 64}, {})
            again = compiler.compile(kernel, {"x_ptr": x, "out_ptr": x, "stride": 48, "n_cols": 48, "BLOCK": 64}, {})
            other = compiler.compile(kernel, {"x_ptr": x, "out_ptr": x, "stride": 1, "n_cols": 48, "BLOCK": 64}, {})
        finally:
            compiler.close()
    assert triton.knobs.cache.dir == str(tmp_path)
    assert first is again and other is not first  # stride 1 is specialised apart
    assert first.metadata.target.arch == 90
    # The binaries stay, apart from what a real GPU run reads (compat/caches.py).
    assert [p.name for p in tmp_path.iterdir()] == [compat.caches.COMPILE_ONLY_SUBDIR]
    assert any((tmp_path / compat.caches.COMPILE_ONLY_SUBDIR).iterdir())


def test_what_is_not_triton_s_verdict_on_the_kernel_is_a_problem_not_a_failure() -> None:
    problems: list[tuple[str, BaseException]] = []
    with compile_only() as env:
        kernel = _load(ASSETS / "row_softmax.py").row_softmax_kernel
        compiler = compat.triton_compile.LaunchCompiler(on_problem=lambda k, e: problems.append((k, e)))
        try:
            args = {"x_ptr": object(), "out_ptr": object(), "stride": 48, "n_cols": 48, "BLOCK": 64}
            assert compiler.compile(kernel, args, {}) is None
        finally:
            compiler.close()
        env.uncompiled_launch(*problems[0])
    assert [k for k, _ in problems] == ["row_softmax_kernel"]
    assert not compat.triton_compile.is_kernel_compile_error(problems[0][1])
    (source, message), = env.problems
    assert source == "compile" and message.startswith("row_softmax_kernel could not be compiled for sm_90 at its launch")


def test_the_interpreter_leaves_triton_language_as_it_found_it() -> None:
    """A nested @jit call in the interpreter (tl.max, tl.sum) used to leave triton.language
    patched, so the next real compile failed ("'value' object has no attribute 'dtype'")."""
    import triton.language as tl

    asset = ASSETS / "row_softmax.py"
    before = (tl.core.tensor.__mul__, tl.core.program_id, tl.core.tensor.__add__)
    with compile_only():
        module = _load(asset)
        x = torch.randn(4, 48)
        out = module.Net()(x)
        assert (tl.core.tensor.__mul__, tl.core.program_id, tl.core.tensor.__add__) == before
        compiled = compat.triton_compile.compile_kernel(
            module.row_softmax_kernel, {"x_ptr": torch.float32, "out_ptr": torch.float32, "stride": 48, "n_cols": 48,
                                        "BLOCK": 64}, {})
    torch.testing.assert_close(out, torch.softmax(x, dim=1) * 2)
    assert compiled.metadata.target.arch == 90


# --- through the CLI (slow) ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    cold = tmp_path_factory.mktemp("cold-triton-cache")
    cli = CliRuns(workers=2)
    cli.submit("queries", ["graph", "tests/assets/device_queries.py:Net", "--json", "--device", "cpu"])
    for name in ("undefined_name_kernel", "runtime_arange_kernel"):
        cli.submit(name, ["graph", f"tests/assets/failures/{name}.py:Net", "--json", "--device", "cpu"])
    cli.submit("check undefined_name_kernel", ["check", "tests/assets/failures/undefined_name_kernel.py:Net",
                                               "--entry", "scale_kernel=hop", "--device", "cpu"])
    cli.submit("cold resources", ["graph", "tests/assets/row_softmax.py:Net", "--resources", "--json", "--device", "cpu"],
               env=cli_env(TRITON_CACHE_DIR=str(cold)))
    if importlib.util.find_spec("fla") is not None:
        cli.submit("fla", ["graph", "tests/assets/fla_l2norm.py:Net", "--json", "--device", "cpu"])
    yield cli
    cli.close()


@pytest.mark.slow
def test_queries_at_import_and_in_forward_are_answered_and_listed(runs: CliRuns) -> None:
    report = json_report(runs.get("queries"))
    asset = ASSETS / "device_queries.py"
    (note,) = [d for d in report["diagnostics"] if d["source"] == "compile-only"]
    assert note["severity"] == "note"
    message = note["message"]
    assert 'for sm_90 (H100-like, "NVIDIA H100 80GB HBM3")' in message
    assert f"get_device_capability ×3 (tests/assets/device_queries.py:{_line(asset, 'IMPORT-CAPABILITY')})" in message
    assert f"get_device_name ×3 (tests/assets/device_queries.py:{_line(asset, 'IMPORT-NAME')})" in message
    for query in ("current_device", "get_device_properties"):
        assert f"{query} ×2 (tests/assets/device_queries.py:{_line(asset, 'FORWARD-PROPS')})" in message
    # Dynamo traces the queries as on a GPU (torch 2.11, H200): only get_device_name breaks.
    (brk,) = report["graph_breaks"]
    assert (brk["headline"], brk["gb_id"], brk["line"]) == (
        "torch.* op returned non-Tensor", "GB0208", _line(asset, "FORWARD-NAME"))
    assert sorted({g["compile_id"] for g in report["graphs"] if g["stage"] == "dynamo"}) == ["0/0", "1/0"]
    (kernel,) = report["kernels"]
    assert kernel["entries"] == ["hop"]
    (dynamo,) = [o for o in kernel["occurrences"] if o["stage"] == "dynamo"]
    # What the forward computed from the answers: an H100's 132 SMs, capability 9 -> BLOCK 16.
    assert (dynamo["constexprs"], dynamo["scalars"]) == ({"BLOCK": 16}, {"n": 64, "factor": 132.0})


@pytest.mark.slow
@pytest.mark.parametrize(("name", "kernel", "error"), [
    ("undefined_name_kernel", "scale_kernel", "NameError('undefined_scale is not defined')"),
    ("runtime_arange_kernel", "copy_kernel", "arange's arguments must be of type tl.constexpr"),
])
def test_a_kernel_triton_cannot_compile_fails_the_capture(runs: CliRuns, name: str, kernel: str, error: str) -> None:
    proc = runs.get(name)
    assert proc.returncode == ExitCode.USER_CODE, explain(proc)
    report = json.loads(proc.stdout)
    failure = report["failure"]
    asset = FAILURES / f"{name}.py"
    assert (failure["stage"], failure["kernel"], failure["exc_type"]) == ("kernel_compile", kernel, "CompilationError")
    assert failure["message"].startswith("at ") and failure["message"].endswith(error)
    assert failure["user_frame"] == f"{asset}:{_line(asset, 'ERROR-LINE')} in {kernel}"
    assert f"error: the model failed while Triton compiled a kernel: CompilationError: {error}" in proc.stderr
    # Everything before the launch was captured: the kernel is still a hop in the graphs.
    assert [k["entries"] for k in report["kernels"]] == [["hop"]]
    assert not [o for k in report["kernels"] for o in k["occurrences"] if o["stage"] == "runtime"]


@pytest.mark.slow
def test_check_fails_on_a_kernel_that_cannot_compile(runs: CliRuns) -> None:
    proc = runs.get("check undefined_name_kernel")
    assert proc.returncode == ExitCode.FINDINGS, explain(proc)
    assert ("FAIL the compile failed at kernel_compile: CompilationError: "
            "NameError('undefined_scale is not defined')") in proc.stdout


@pytest.mark.slow
def test_resources_with_a_cold_triton_cache(runs: CliRuns) -> None:
    report = json_report(runs.get("cold resources"))
    (kernel,) = report["kernels"]
    (row,) = kernel["resources"]
    assert (row["target"], row["source"]) == ("sm_90", "compiled for sm_90")
    assert row["registers"] and row["num_warps"] == 4
    assert report["diagnostics"] == []


@pytest.mark.slow
def test_fla_imports_and_runs_in_compile_only_mode(runs: CliRuns) -> None:
    if importlib.util.find_spec("fla") is None:
        pytest.skip("fla-core is not installed (pip install fla-core==0.6.0 einops)")
    report = json_report(runs.get("fla"))
    (note,) = [d for d in report["diagnostics"] if d["message"].startswith("emulated CUDA device queries")]
    assert "get_device_name ×1 (fla/utils/hardware.py:" in note["message"]
    assert "get_device_capability ×" in note["message"]
    assert {k["name"] for k in report["kernels"]} == {"l2norm_fwd_kernel"}
    assert report["failure"] is None


def test_a_time_limit_firing_while_the_recorder_installs_is_not_an_internal_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`--timeout 2` could fire inside the recorder's setup, before the warnings list was bound: the `finally`
    then raised UnboundLocalError (exit 6, found by a hostile user) instead of the time limit's own exception."""
    import torch

    from tritoninspect.capture import session
    from tritoninspect.capture.recorder import Recorder

    class Fired(Exception):
        pass

    def installed(self: Recorder) -> None:
        raise Fired("the time limit")

    monkeypatch.setattr(Recorder, "installed", installed)
    with pytest.raises(Fired):
        session.capture_run(torch.nn.Identity(), [(torch.ones(2),)], info=session.ModeInfo("gpu", "x", "cpu"))


def test_launch_kwargs_are_parsed_for_the_stub_target(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch 2.14's Inductor checks the kernel's device for a Triton backend and parses launch kwargs with the
    backend of that device's target (compat.compile_only.backend_option_patches). Compile-only mode's tensors
    are on the CPU: without the patches every launch with a keyword failed ("triton not built with the 'cpu'
    backend"). The two torch 2.14 names are stood in for here, so that the test runs on every torch."""
    from torch._dynamo import device_interface
    from torch._inductor.runtime import triton_helpers
    from triton.backends.compiler import GPUTarget

    seen: list[Any] = []

    unavailable_error = getattr(torch._dynamo.exc, "TritonUnavailableError", RuntimeError)

    def unavailable(device: Any = None) -> None:  # torch 2.14's, which has_triton() asks too
        import triton.backends

        if "cpu" not in triton.backends.backends:
            raise unavailable_error("triton not built with the 'cpu' backend")

    monkeypatch.setattr(device_interface.CpuInterface, "raise_if_triton_unavailable", staticmethod(unavailable),
                        raising=False)
    monkeypatch.setattr(triton_helpers, "try_filter_backend_options_for_target",
                        lambda target, options, names=(): seen.append(target) or dict(options), raising=False)
    with compile_only(90):
        device_interface.CpuInterface.raise_if_triton_unavailable(torch.device("cpu"))
        options = triton_helpers.try_filter_backend_options_for_target(GPUTarget("cpu", 0, 32), {"num_warps": 4})
    assert options == {"num_warps": 4}
    assert (seen[0].backend, seen[0].arch) == ("cuda", 90)
    with pytest.raises(unavailable_error, match="'cpu' backend"):  # restored after the mode
        device_interface.CpuInterface.raise_if_triton_unavailable(torch.device("cpu"))


@pytest.mark.skipif(torch.cuda.is_available(), reason="compile-only mode allocates for real on a GPU machine")
def test_a_cuda_allocation_after_an_emulated_device_count_says_so() -> None:
    """gemlite 0.6 allocates a tensor on each of `range(torch.cuda.device_count())` devices when imported:
    the emulated GPU makes it ask for one, which a CPU-only machine without tritoninspect never does. The
    refusal says which emulated answer its file got first."""
    with compile_only():
        tables = []
        with pytest.raises(AssertionError) as raised:
            for g in range(torch.cuda.device_count()):
                tables.append(torch.zeros(4, device=f"cuda:{g}"))
    count_line = line_of(Path(__file__), "for g in range(torch.cuda.device_count()):")
    message = str(raised.value)
    assert message.startswith("compile-only mode cannot create CUDA tensors: ")
    assert (f"compile-only mode's emulated GPU answered device_count() at line {count_line} in that file first"
            in message), message


@pytest.mark.skipif(hasattr(torch._C, "_cuda_exchangeDevice"), reason="a CUDA build takes torch.cuda.device(None) itself")
def test_torch_cuda_device_of_a_cpu_tensors_index_is_a_no_op() -> None:
    """FlagGems 5.0's generated wrappers enter `torch.cuda.device(in0.device.index)` around each launch:
    None for compile-only mode's CPU tensors, which a build without CUDA turned into a TypeError
    ("'<' not supported between instances of 'NoneType' and 'int'") where torch documents a no-op."""
    with compile_only():
        with torch.cuda.device(torch.zeros(1).device.index):
            pass
    with pytest.raises(TypeError, match="not supported between instances of 'NoneType' and 'int'"):
        with torch.cuda.device(None):  # torch's own again, after the mode
            pass


@pytest.mark.skipif(hasattr(torch._C, "_cuda_exchangeDevice"), reason="a CUDA build takes torch.cuda.device(None) itself")
def test_torch_cuda_device_of_a_cpu_tensors_index_is_a_no_op_where_dynamo_traces_it() -> None:
    """mamba-ssm 2.3 launches every kernel inside `with torch.cuda.device(x.device.index):` in code Dynamo
    traces: Dynamo enters the context through its own reference to `torch.cuda._exchange_device`, which
    failed the trace with the same TypeError."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        with torch.cuda.device(x.device.index):
            return x + 1

    torch._dynamo.reset()
    with compile_only():
        out = torch.compile(fn, backend="eager", fullgraph=True)(torch.zeros(2))
    torch._dynamo.reset()
    assert out.tolist() == [1.0, 1.0]
