"""A kernel launched twice in one graph: Inductor defines it once per launch (add_relu_kernel_0 and _1),
and each graph node's occurrence names the definition its own launch became, live and from a trace.

Found by the newcomer pass (helper-31): every node of the kernel said `add_relu_kernel_0`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _expect import run_cli

MODEL = '''
import torch
import triton
import triton.language as tl


@triton.jit
def add_relu_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + y, 0.0), mask=mask)


def add_relu(x, y):
    out = torch.empty_like(x)
    add_relu_kernel[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK=256)
    return out


class Net(torch.nn.Module):
    def forward(self, x, y):
        return add_relu(add_relu(x, y), y)


def example_inputs():
    return torch.randn(512), torch.randn(512)
'''


def _definitions(report: dict) -> list[tuple[str, str | None, str | None]]:
    (kernel,) = report["kernels"]
    return [(o["stage"], o["node"], o["inductor_name"]) for o in kernel["occurrences"] if o["node"]]


def _launch_order(report: dict) -> list[str]:
    """The definitions in the order `call()` launches them, with the argument each reads first."""
    (code,) = [g["code"] for g in report["graphs"] if g["stage"] == "output_code"]
    return [line.split(".run(")[0].strip() for line in code.splitlines() if "add_relu_kernel_" in line and ".run(" in line]


@pytest.mark.slow
def test_each_node_names_the_definition_its_launch_became(tmp_path: Path) -> None:
    model = tmp_path / "twice.py"
    model.write_text(MODEL)
    done = run_cli(["graph", f"{model}:Net", "--json", "--trace", str(tmp_path / "trace")])
    assert done.returncode == 0, done.stderr
    live = json.loads(done.stdout)
    assert _launch_order(live) == ["add_relu_kernel_0", "add_relu_kernel_1"]
    found = _definitions(live)
    for stage in ("dynamo", "aot_inference", "post_grad", "post_grad_final"):
        # The n-th node of the kernel in each graph is its n-th launch (Inductor keeps their order).
        assert [name for s, _, name in found if s == stage] == ["add_relu_kernel_0", "add_relu_kernel_1"], found
    read = run_cli(["graph", str(tmp_path / "trace"), "--json"])
    assert read.returncode == 0, read.stderr
    traced = _definitions(json.loads(read.stdout))
    assert [name for s, _, name in traced if s == "dynamo"] == ["add_relu_kernel_0", "add_relu_kernel_1"], traced
