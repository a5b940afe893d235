"""One capture of a target as the CLI makes it, plus its values: eager and compiled (tests/_advice_proofs.py).

    python tests/_advice_run.py tests/assets/advice/ln_zeros_merged.py:Net OUT_DIR [--device cpu|cuda] [--dynamic]

Writes OUT_DIR/report.json (what `tritoninspect graph TARGET --json` writes) and OUT_DIR/values.pt: the
outputs of every call, and the gradients of the inputs and parameters after them, once run eagerly
(in the same mode: Triton's interpreter in compile-only mode) and once compiled by the capture. The
capture is the pipeline's own (`run.pipeline.run`); only `capture_run` is wrapped, to run the eager
reference first on copies of the inputs and to keep what each compiled call returned.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _copy(value: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, (list, tuple)):
        return type(value)(_copy(v) for v in value)
    return value


def _detached(value: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone()
    if isinstance(value, (list, tuple)):
        return [_detached(v) for v in value]
    if isinstance(value, dict):
        return {k: _detached(v) for k, v in value.items()}
    return value


def _grads(module: Any, input_sets: list[tuple[Any, ...]]) -> dict[str, Any]:
    import torch

    grads: dict[str, Any] = {}
    for i, args in enumerate(input_sets):
        for j, t in enumerate(args):
            if isinstance(t, torch.Tensor) and t.grad is not None:
                grads[f"input {i}.{j}"] = t.grad.detach().cpu().clone()
    if isinstance(module, torch.nn.Module):
        for name, p in module.named_parameters():
            if p.grad is not None:
                grads[name] = p.grad.detach().cpu().clone()
    return grads


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("target")
    parser.add_argument("out", type=Path)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dynamic", action="store_true", help="compile with dynamic shapes from the start")
    args = parser.parse_args()

    from tritoninspect.capture import session
    from tritoninspect.run.pipeline import CaptureOptions, run
    from tritoninspect.source.spec import parse_spec

    values: dict[str, Any] = {}
    real_capture_run, real_call_once = session.capture_run, session.call_once

    def capture_run(module: Any, input_sets: Any, **kwargs: Any) -> Any:
        backward = kwargs.get("backward", False)
        eager_sets = [_copy(s) for s in input_sets]
        values["eager"] = [_detached(real_call_once(module, s, backward)) for s in eager_sets]
        values["eager_grads"] = _grads(module, eager_sets)
        if hasattr(module, "zero_grad"):
            module.zero_grad(set_to_none=True)
        compiled: list[Any] = []

        def call_once(fn: Any, call_args: Any, call_backward: bool, progress: Any = None,
                      grad: bool | None = None) -> Any:
            out = real_call_once(fn, call_args, call_backward, progress, grad=grad)
            compiled.append(_detached(out))
            return out

        session.call_once = call_once
        try:
            capture = real_capture_run(module, input_sets, **kwargs)
        finally:
            session.call_once = real_call_once
        values["compiled"] = compiled
        values["compiled_grads"] = _grads(module, list(input_sets))
        return capture

    session.capture_run = capture_run
    import torch

    torch.manual_seed(0)  # the same parameters and example inputs for a model and its changed copy
    report = run(parse_spec(args.target), CaptureOptions(device=args.device, dynamic=args.dynamic))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.json").write_text(report.to_json() + "\n", encoding="utf-8")
    torch.save(values, args.out / "values.pt")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
