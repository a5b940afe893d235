"""`tritoninspect export` when native code crashes, and its terminal output (issue 17, GPU run).

On the H200 8 of 9 export runs died with SIGSEGV once AOTInductor started, leaving no report.
AOTInductor now runs in a child (tritoninspect/run/aoti.py): a crash there becomes the
report's failure. The fast tests crash a stand-in child (a few lines of Python killing itself
with SIGSEGV under faulthandler); the slow one crashes the real child (the custom_op sample's CPU
package, built in compile-only mode) through the TRITONINSPECT_TEST_CRASH_AT hook. Also: text
tables never split a name, and a failed export's `error:` line stays short.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_export import ADD, DATA_PTR, EagerLaunch, ExportNode, capture, failure, invoke

from tritoninspect.analyse.export import build_export_report
from tritoninspect.capture.export import CRASH_AT_ENV
from tritoninspect.model.records import KernelRecord
from tritoninspect.model.errors import ExitCode
from tritoninspect.run.pipeline_export import ExportOptions
from tritoninspect.render.export import render_export
from tritoninspect.run import aoti
from tritoninspect.source.spec import parse_spec

ROOT = Path(__file__).resolve().parents[1]

#: A child that enters "aoti_load" as the real one does, prints a line and dies from SIGSEGV.
CRASHING_CHILD = textwrap.dedent("""
    import faulthandler, os, signal, sys
    faulthandler.enable()
    open(os.environ["TRITONINSPECT_STAGE_FILE"], "w").write("aoti_load")
    print("loading the package", file=sys.stderr, flush=True)
    def load_package():
        os.kill(os.getpid(), signal.SIGSEGV)
    load_package()
""")


def test_a_child_killed_by_sigsegv_becomes_a_failure_naming_stage_signal_and_stack(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aoti, "child_command", lambda request, out: [sys.executable, "-c", CRASHING_CHILD])
    record, fail = aoti.run_aoti_child(parse_spec("samples/custom_op.py:Net"), ExportOptions(device="cuda"),
                                       device="cuda:0")
    assert fail is not None and fail.stage == "aoti_load" and fail.exc_type == "NativeCrash"
    assert fail.message.startswith("the package crashed with signal 11 (SIGSEGV) when loaded")
    assert "in load_package" in fail.message  # faulthandler's stack of the crashing thread
    assert record.device == "cuda:0" and record.loaded is False


#: A child that says which libstdc++ it has mapped and what LD_PRELOAD it got (Python itself loads no
#: libstdc++: one mapped before any import was preloaded), then answers "built and loaded".
REPORTING_CHILD = textwrap.dedent("""
    import os, pickle, sys
    maps = sorted({l.split()[-1] for l in open("/proc/self/maps") if "libstdc++.so" in l and "/" in l})
    print("MAPPED", [os.path.realpath(m) for m in maps], file=sys.stderr)
    print("PRELOAD", os.environ.get("LD_PRELOAD", ""), file=sys.stderr)
    from tritoninspect.model.export_records import AotiRecord
    record = AotiRecord(status="built", device="cuda:0", loaded=True, matches_eager=True)
    open(sys.argv[-1], "wb").write(pickle.dumps({"error": None, "aoti": record, "failure": None}))
""")


def test_the_child_loads_the_package_with_the_compiler_s_libstdcxx_preloaded(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """On the H200 torch's loader crashed in std::regex (the wrapper .so reaching a libstdc++ not in
    the global scope); with the compiler's libstdc++ preloaded every package loaded. The child now
    starts that way, and the report's note says so."""
    from tritoninspect.capture.compat.cxx_runtime import compiler_libstdcxx

    runtime = compiler_libstdcxx()
    if runtime is None:
        pytest.skip("no C++ compiler here names a libstdc++ (nothing to preload)")
    seen = tmp_path / "stderr"
    monkeypatch.setattr(aoti, "child_command", lambda request, out: [
        "sh", "-c", f'"{sys.executable}" -c \'{REPORTING_CHILD}\' "{out}" 2>"{seen}"'])
    record, fail = aoti.run_aoti_child(parse_spec("samples/custom_op.py:Net"), ExportOptions(device="cuda"),
                                       device="cuda:0")
    assert fail is None and record.loaded is True
    lines = seen.read_text().splitlines()
    assert f"MAPPED ['{runtime}']" in lines and lines[1].split()[1] == runtime
    assert record.notes == [aoti.runtime_note(runtime)] and f"LD_PRELOAD={runtime}" in record.notes[0]


def test_the_child_builds_its_precompiled_headers_where_the_users_runs_keep_them(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The child's TMPDIR is a scratch folder; torch would derive from it an empty header folder, and an
    export rebuilt the precompiled headers each time (15 of the 50 s of a CPU export)."""
    from tritoninspect.capture.compat import caches

    seen = tmp_path / "stderr"
    child = ('import os, sys; print(os.environ["TMPDIR"]); print(os.environ.get("%s", ""))' % caches.PRECOMPILED_HEADERS_ENV)
    monkeypatch.setattr(aoti, "child_command", lambda request, out: [
        "sh", "-c", f'"{sys.executable}" -c \'{child}\' >"{seen}"'])
    aoti.run_aoti_child(parse_spec("samples/custom_op.py:Net"), ExportOptions(device="cpu"), device="cpu")
    scratch, headers = seen.read_text().splitlines()
    assert headers == caches.precompiled_header_dir() and headers.endswith("precompiled_headers")
    assert not headers.startswith(scratch)


def test_the_precompiled_header_folder_is_set_where_torch_reads_it(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    import torch._inductor.codecache as codecache

    from tritoninspect.capture.compat import caches

    monkeypatch.setattr(codecache, "_HEADER_DIR", codecache._HEADER_DIR)
    monkeypatch.setattr(codecache, "_HEADER_LOCK_DIR", codecache._HEADER_LOCK_DIR)
    caches.use_precompiled_header_dir(str(tmp_path))
    assert (codecache._HEADER_DIR, codecache._HEADER_LOCK_DIR) == (str(tmp_path), str(tmp_path / "locks"))
    assert caches.precompiled_header_dir() == str(tmp_path)


def test_nothing_older_than_the_process_s_libstdcxx_is_preloaded(monkeypatch: pytest.MonkeyPatch) -> None:
    from tritoninspect.capture.compat import cxx_runtime

    new, old = "/usr/lib/libstdc++.so.6.0.33", "/opt/gcc9/lib64/libstdc++.so.6.0.28"
    monkeypatch.setattr(cxx_runtime, "compiler_libstdcxx", lambda: old)
    monkeypatch.setattr(cxx_runtime, "loaded_libstdcxx", lambda: [new])
    assert cxx_runtime.preload_for_package() is None
    monkeypatch.setattr(cxx_runtime, "compiler_libstdcxx", lambda: new)
    monkeypatch.setattr(cxx_runtime, "loaded_libstdcxx", lambda: [old])
    assert cxx_runtime.preload_for_package() == new  # newer: a superset of the loaded one's symbols
    monkeypatch.setattr(cxx_runtime, "loaded_libstdcxx", lambda: [new])
    assert cxx_runtime.preload_for_package() == new  # the same file: made global from the start
    monkeypatch.setattr(cxx_runtime, "compiler_libstdcxx", lambda: None)
    assert cxx_runtime.preload_for_package() is None  # no compiler: nothing to preload
    assert cxx_runtime.with_preload({"LD_PRELOAD": f"/x/a.so:{new}"}, new) == {"LD_PRELOAD": f"{new} /x/a.so"}


def test_a_compiler_that_names_no_libstdcxx_gives_none(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tritoninspect.capture.compat import cxx_runtime

    echo = tmp_path / "cxx"
    echo.write_text("#!/bin/sh\necho libstdc++.so.6\n")  # what g++ prints when it has no such file
    echo.chmod(0o755)
    monkeypatch.setattr(cxx_runtime, "_inductor_compiler", lambda: str(echo))
    assert cxx_runtime.compiler_libstdcxx() is None
    monkeypatch.setattr(cxx_runtime, "_inductor_compiler", lambda: None)
    assert cxx_runtime.compiler_libstdcxx() is None


def test_the_loaded_libstdcxx_is_promoted_to_the_global_scope() -> None:
    import torch  # noqa: F401 - loads libstdc++

    from tritoninspect.capture.compat import cxx_runtime

    loaded = cxx_runtime.loaded_libstdcxx()
    assert loaded and cxx_runtime.promote_loaded() == loaded


def test_a_crash_in_the_report_is_a_finding_and_the_export_before_it_stays() -> None:
    crash = aoti.crash_failure(-11, "aoti_run", "Fatal Python error: Segmentation fault\n\n"
                               "Current thread 0x1 (most recent call first):\n  File \"x.py\", line 3 in run\n")
    nodes = [ExportNode("add", "op", ADD.id, "m::add", False)]
    cap = capture(launches=[EagerLaunch(ADD.id, "m::add", {}, {})], nodes=nodes, graph_code="def forward(x): ...",
                  failure=crash)
    report = build_export_report(cap)
    assert report.failure is not None and report.failure.stage == "aoti_run"
    assert [f.cause for f in report.export.findings] == ["native_crash"]
    text = render_export(report, color=False, width=120)
    assert "crashed with signal 11 (SIGSEGV) when run" in text and 'line 3 in run' in text
    assert "Exported program" in text


def test_the_stack_tail_shows_the_crashing_thread_not_the_helper_threads() -> None:
    stderr = ("Fatal Python error: Segmentation fault\n\nThread 0x2 (most recent call first):\n"
              "  File \"stdout_guard.py\", line 54 in _drain\n\nCurrent thread 0x1 (most recent call first):\n"
              "  File \"export.py\", line 9 in _load_and_compare\n")
    lines = aoti.crash_failure(-11, "aoti_load", stderr).message.splitlines()
    assert lines[3:] == ["Fatal Python error: Segmentation fault", "Current thread 0x1 (most recent call first):",
                         '  File "export.py", line 9 in _load_and_compare']


# --- text output ---------------------------------------------------------------------------------


LONG = KernelRecord("m.scale_bias_kernel", "scale_bias_kernel", "m.py", 5, ("jit",), ("BLOCK",))


@pytest.mark.parametrize("width", [50, 72, 80, 100])
def test_tables_never_split_a_name(width: int) -> None:
    node = "triton_kernel_wrapper_mutation_proxy"
    cap = capture(kernels={LONG.id: LONG}, launches=[EagerLaunch(LONG.id, "mymod::scale_bias_t", {}, {})],
                  nodes=[ExportNode(node, "op", LONG.id, "mymod::scale_bias_t", False)])
    words = set(render_export(build_export_report(cap), color=False, width=width).split())
    assert {"scale_bias_kernel", node, "mymod::scale_bias_t"} <= words


def test_a_failed_export_says_so_in_one_short_line_with_our_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    message = DATA_PTR + (" To fix this, please wrap the custom kernel into an opaque custom op. Please see the "
                          "following for details: https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")
    cap = capture(strict=False, launches=[EagerLaunch(ADD.id, None, {}, {})], failure=failure("export", message))
    import tritoninspect.run.pipeline_export as route

    monkeypatch.setattr("tritoninspect.commands._capture.ready_to_capture", lambda: None)
    monkeypatch.setattr(route, "run_export", lambda spec, options: build_export_report(cap))
    result = invoke(["export", "samples/add_raw.py:Net", "--stage", "export"])
    assert result.exit_code == ExitCode.USER_CODE
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert "Cannot access data pointer of Tensor" in line and "hint: wrap the kernel in torch.library.triton_op" in line
    assert "opaque custom op" not in line and len(line) < 330
    assert "opaque custom op" in result.stdout  # the report keeps torch's whole message


# --- the real child (slow: a CPU AOTInductor package) ---------------------------------------------


@pytest.mark.slow
def test_a_package_crashing_when_run_leaves_the_report_its_code_and_exit_4(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    env = {**os.environ, CRASH_AT_ENV: "aoti_run", "NO_COLOR": "1"}
    proc = subprocess.run([sys.executable, "-m", "tritoninspect", "export", "samples/custom_op.py:Net", "--device",
                           "cpu", "--json", "-o", str(out)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=400)
    assert proc.returncode == ExitCode.USER_CODE, proc.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["failure"]["stage"] == "aoti_run" and "SIGSEGV" in report["failure"]["message"]
    package = report["export"]["aoti"]
    assert package["status"] == "built" and package["loaded"] is True
    assert any(g["stage"] == "aoti_output_code" for g in report["graphs"])  # the package's code survived
    assert any(g["stage"] == "export" for g in report["graphs"])
    (line,) = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert "crashed with signal 11 (SIGSEGV) when run" in line and len(line) < 400
