"""Which device queries a kernel library makes, where, and when: at import or at call time.

Not a model and not a test: a probe for the findings of issue 12 item 5. It enters compile-only mode
(tritoninspect's stub Triton driver, launches interpreted), wraps the public functions of
``torch.cuda`` and the stub driver's methods so that every call made from a library frame is
recorded (function, arguments, the library frames that made it, phase, outcome), then imports the
given models (phase ``import``) and runs each once eagerly, forward and backward (phase ``call``).

    python tests/reallib/_probe_device_queries.py [--h100 | --cuda] tests/reallib/fla_l2norm.py ...

Without ``--h100`` the calls go to the real ``torch.cuda`` (on a CPU-only build they raise) and the
stub driver as it is. With ``--h100`` a library frame's call is answered as an H100 SXM (sm_90)
would answer it, so the library takes its GPU code path; a call from anywhere else (torch, Triton)
is left alone. With ``--cuda`` (on a GPU machine) there is no stub and nothing is faked: the
model runs on the GPU and the real answers are recorded. Prints one JSON object per recorded call,
then a summary table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import traceback
import types
from pathlib import Path
from typing import Any

import torch

LIBRARIES = ("liger_kernel", "fla")

#: What an H100 SXM5 80GB (sm_90) answers. torch.cuda.get_device_properties(0) fields as torch 2.13
#: names them; the Triton driver's utils.get_device_properties(0) dict as triton 3.7's NVIDIA driver
#: (driver.c getDeviceProperties) names it.
H100 = {
    "name": "NVIDIA H100 80GB HBM3",
    "capability": (9, 0),
    "properties": {
        "name": "NVIDIA H100 80GB HBM3",
        "major": 9,
        "minor": 0,
        "multi_processor_count": 132,
        "total_memory": 85_045_477_376,
        "shared_memory_per_block": 49_152,
        "shared_memory_per_block_optin": 232_448,
        "shared_memory_per_multiprocessor": 233_472,
        "regs_per_multiprocessor": 65_536,
        "max_threads_per_multi_processor": 2_048,
        "warp_size": 32,
        "L2_cache_size": 52_428_800,
        "gcnArchName": "NVIDIA H100 80GB HBM3",
        "is_integrated": False,
        "is_multi_gpu_board": False,
    },
    "triton_properties": {
        "max_shared_mem": 232_448,
        "max_num_regs": 65_536,
        "multiprocessor_count": 132,
        "warpSize": 32,
        "sm_clock_rate": 1_980_000,
        "mem_clock_rate": 2_619_000,
        "mem_bus_width": 5_120,
    },
}

RECORDS: list[dict[str, Any]] = []
PHASE = ["setup"]


def library_frames(depth: int = 2) -> list[str]:
    """`path:line in function` of the library frames on the stack, innermost first."""
    frames = []
    frame = sys._getframe(depth)
    while frame is not None:
        path = frame.f_code.co_filename
        for lib in LIBRARIES:
            marker = f"/site-packages/{lib}/"
            if marker in path:
                frames.append(f"{lib}/{path.split(marker, 1)[1]}:{frame.f_lineno} in {frame.f_code.co_name}")
                break
        frame = frame.f_back
    return frames


def from_library() -> bool:
    """Whether the caller of the wrapped function is a library frame."""
    path = sys._getframe(2).f_code.co_filename
    return any(f"/site-packages/{lib}/" in path for lib in LIBRARIES)


def fake_answer(name: str, args: tuple[Any, ...]) -> Any:
    if name == "get_device_name":
        return H100["name"]
    if name == "get_device_capability":
        return H100["capability"]
    if name == "get_device_properties":
        return types.SimpleNamespace(**H100["properties"])
    if name == "is_available":
        return True
    if name == "device_count":
        return 1
    if name == "current_device":
        return 0
    raise NotImplementedError(name)


FAKED = {"get_device_name", "get_device_capability", "get_device_properties", "is_available", "device_count",
         "current_device"}


def wrap(owner: Any, name: str, original: Any, *, h100: bool, label: str) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not from_library():
            return original(*args, **kwargs)
        record = {"phase": PHASE[0], "call": f"{label}.{name}", "args": [repr(a) for a in args],
                  "frames": library_frames()}
        RECORDS.append(record)
        if h100 and name in FAKED and label == "torch.cuda":
            record["answer"] = repr(fake_answer(name, args))
            record["faked"] = True
            return fake_answer(name, args)
        try:
            value = original(*args, **kwargs)
        except BaseException as exc:
            record["raised"] = f"{type(exc).__name__}: {exc}"
            raise
        record["answer"] = repr(value)
        return value

    wrapper.__wrapped__ = original  # type: ignore[attr-defined]
    return wrapper


def install(h100: bool, stub: bool = True) -> None:
    for name in ("get_device_name", "get_device_capability", "get_device_properties", "is_available",
                 "device_count", "current_device", "set_device", "synchronize", "get_arch_list",
                 "is_bf16_supported", "mem_get_info", "current_stream", "get_rng_state", "manual_seed"):
        setattr(torch.cuda, name, wrap(torch.cuda, name, getattr(torch.cuda, name), h100=h100, label="torch.cuda"))

    import triton

    driver = triton.runtime.driver.active

    class Utils:
        """The stub driver has no `utils`; with --h100 answer as the NVIDIA driver would."""

        def __getattr__(self, attr: str) -> Any:
            record = {"phase": PHASE[0], "call": f"triton.runtime.driver.active.utils.{attr}",
                      "frames": library_frames()}
            RECORDS.append(record)
            if not stub:
                real = getattr(driver.utils, attr)

                def call(*args: Any, **kwargs: Any) -> Any:
                    value = real(*args, **kwargs)
                    record["args"] = [repr(a) for a in args]
                    record["answer"] = repr(value)
                    return value

                return call
            if h100 and attr == "get_device_properties":
                record["answer"] = repr(H100["triton_properties"])
                record["faked"] = True
                return lambda device=0: dict(H100["triton_properties"])
            record["raised"] = f"AttributeError: the compile-only stub driver has no utils.{attr}"
            raise AttributeError(attr)

    class Recording:
        def __getattr__(self, attr: str) -> Any:
            if attr == "utils":
                if not from_library():
                    raise AttributeError("utils")
                return Utils()
            value = getattr(driver, attr)
            if callable(value) and from_library():
                return wrap(driver, attr, value, h100=h100, label="triton.runtime.driver.active")
            return value

    triton.runtime.driver._active = Recording()  # type: ignore[attr-defined]


def load(path: Path) -> Any:
    name = f"_probe_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--h100", action="store_true", help="answer library queries as an H100 (sm_90) would")
    parser.add_argument("--cuda", action="store_true", help="on a GPU: no stub, nothing faked, run on cuda")
    parser.add_argument("models", nargs="+", type=Path)
    opts = parser.parse_args()

    import contextlib

    from tritoninspect.capture.session import compile_only

    status = 0
    device = "cuda" if opts.cuda else "cpu"
    with contextlib.nullcontext() if opts.cuda else compile_only():
        install(opts.h100, stub=not opts.cuda)
        for path in opts.models:
            PHASE[0] = f"import {path.stem}"
            try:
                module = load(path)
            except BaseException as exc:  # noqa: BLE001 - the probe reports and goes on
                print(f"# {path.stem}: import failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                traceback.print_exc(limit=-3)
                status = 1
                continue
            PHASE[0] = f"call {path.stem}"
            try:
                torch.manual_seed(0)
                inputs = module.example_inputs()
                inputs = inputs if isinstance(inputs, tuple) else (inputs,)
                inputs = tuple(t.detach().to(device).requires_grad_(t.requires_grad) for t in inputs)
                out = module.Net().to(device)(*inputs)
                outs = out if isinstance(out, (tuple, list)) else (out,)
                losses = [t.sum() for t in outs if isinstance(t, torch.Tensor) and t.requires_grad]
                if losses:
                    torch.stack(losses).sum().backward()
            except BaseException as exc:  # noqa: BLE001
                print(f"# {path.stem}: call failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                traceback.print_exc(limit=-3)
                status = 1
    for record in RECORDS:
        print(json.dumps(record))
    seen: dict[tuple[str, str, str], int] = {}
    for record in RECORDS:
        key = (record["phase"].split()[0], record["call"], record["frames"][0] if record["frames"] else "?")
        seen[key] = seen.get(key, 0) + 1
    print("\n# phase   call   innermost library frame   (count)")
    for (phase, call, frame), count in sorted(seen.items(), key=lambda kv: (kv[0][2], kv[0][0])):
        print(f"# {phase:6} {call:55} {frame} ({count})")
    return status


if __name__ == "__main__":
    sys.exit(main())
