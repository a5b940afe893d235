"""Plain AOTInductor on this machine, with no tritoninspect in the process: is a crash torch's or ours?

Run THERE by scripts/gpu-export, beside the tritoninspect runs: each case in its own
`python -X faulthandler` process, which exports a model, builds the AOTInductor package, loads it
and runs it on the device, printing one line per step. Usage:
    python scripts/gpu_aoti_probe.py OUTDIR [--device cuda] [--only CASE]
(or `python scripts/gpu_aoti_probe.py --child DEVICE MODEL HOW`: one case in this process, for a debugger)
writes OUTDIR/probe-<case>.txt (the child's output) and prints one summary line per case;
tests/gpu/test_gpu_export.py runs `--only plain,plain_preload` to tell a machine whose AOTInductor
loader crashes (even with the compiler's libstdc++ preloaded, as tritoninspect's child runs) from a crash
of ours.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

#: name -> (model, device or "", how: "package" or "so", preload the C++ compiler's libstdc++)
CASES = {
    # no Triton kernel of the user's: AOTInductor alone
    "plain": ("plain", "", "package", False),
    # the same with the compiler's libstdc++ preloaded, as tritoninspect's AOTInductor child runs (the H200's
    # loader crash in std::regex went away so: tritoninspect/capture/compat/cxx_runtime.py)
    "plain_preload": ("plain", "", "package", True),
    # a user kernel through torch.library.triton_op (torch's documented path for AOTInductor)
    "triton_op": ("samples/triton_op.py:Net", "", "package", False),
    # where does a crash live: the CPU package loader, or the CUDA one; the package or the bare .so
    "plain_cpu": ("plain", "cpu", "package", False),
    "plain_so": ("plain", "", "so", False),
}


def compiler_libstdcxx() -> str | None:
    """`readlink -f $(${CXX:-g++} -print-file-name=libstdc++.so.6)`, or None (no compiler, or it names no file)."""
    try:
        out = subprocess.run([os.environ.get("CXX", "g++"), "-print-file-name=libstdc++.so.6"], capture_output=True,
                             text=True, timeout=30).stdout.strip()
    except OSError:
        return None
    return os.path.realpath(out) if os.path.isabs(out) and os.path.exists(out) else None

CHILD = r'''
import importlib.util, os, sys, tempfile, faulthandler
import torch
device, case, how = sys.argv[1], sys.argv[2], sys.argv[3]
print("torch", torch.__version__, "cuda", torch.cuda.is_available(), flush=True)
if case == "plain":
    class Net(torch.nn.Module):
        def forward(self, x, w):
            return torch.cos(torch.sin(x) + w) * 2
    args = (torch.randn(64), torch.randn(64))
else:
    path, name = case.split(":")
    spec = importlib.util.spec_from_file_location("probe_target", path)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    Net, args = getattr(mod, name), mod.example_inputs()
model = Net().to(device)
args = tuple(a.to(device) for a in args)
ref = model(*args)
print("eager ok", flush=True)
ep = torch.export.export(model, args)
print("export ok", flush=True)
if how == "so":  # the older route: a bare shared library, no package extraction
    so = torch._inductor.aot_compile(ep.module(), args, options={"aot_inductor.package": False})
    print("aoti build ok", so, flush=True)
    runner = torch._export.aot_load(so, device)
    print("aoti load ok", flush=True)
    out = runner(*args)
    torch.cuda.synchronize() if device == "cuda" else None
    print("aoti run ok; matches eager:", torch.allclose(out, ref, atol=1e-5), flush=True)
    sys.exit(0)
with tempfile.TemporaryDirectory() as tmp:
    pkg = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(tmp, "m.pt2"))
    print("aoti build ok", flush=True)
    loaded = torch._inductor.aoti_load_package(pkg)
    print("aoti load ok", flush=True)
    out = loaded(*args)
    torch.cuda.synchronize() if device == "cuda" else None
    print("aoti run ok; matches eager:", torch.allclose(out, ref, atol=1e-5), flush=True)
'''


def main() -> int:
    if sys.argv[1] == "--child":  # one case in this process: `cuda-gdb --args python3 THIS --child cpu plain package`
        sys.argv = [sys.argv[0], *sys.argv[2:]]
        exec(compile(CHILD, "<probe child>", "exec"), {"__name__": "__probe__"})
        return 0
    out = Path(sys.argv[1])
    device = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "cuda"
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    out.mkdir(parents=True, exist_ok=True)
    for name, (case, case_device, how, preload) in CASES.items():
        if only and name not in only.split(","):
            continue
        env = dict(os.environ)
        runtime = compiler_libstdcxx() if preload else None
        if preload and runtime is None:
            print(f"probe {name:10} skipped: no C++ compiler names a libstdc++ to preload")
            continue
        if runtime is not None:
            env["LD_PRELOAD"] = " ".join([runtime, *env.get("LD_PRELOAD", "").split()])
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", CHILD, case_device or device, case, how],
                              capture_output=True, text=True, timeout=240, env=env)
        text = proc.stdout + proc.stderr
        (out / f"probe-{name}.txt").write_text(text)
        steps = [line for line in proc.stdout.splitlines() if line.endswith("ok") or "matches" in line]
        print(f"probe {name:10} rc={proc.returncode:<4} {time.monotonic() - t0:6.1f} s  "
              f"last step: {steps[-1] if steps else 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
