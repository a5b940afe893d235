"""A ``triton.Config(pre_hook=...)``: the launcher's frame falls back to eager.

The config's ``pre_hook`` zeroes the output before each launch. Dynamo cannot
run config hooks at run time (pytorch/pytorch#139059), so it cannot trace the
launch in ``scaled``, the launcher function ``forward`` calls.

What tritoninspect should report: graph breaks at the
``scale_kernel[grid](...)`` line in ``scaled``, all "pre_hook and post_hook are
not supported" (GB0361): first while tracing ``forward`` (which then resumes
after the call), then in ``scaled``'s own frame, which Dynamo skips entirely
("frame skipped": no graph for it), and in triton's launch wrapper (library
frame, also skipped). ``scale_kernel`` is ``eager`` (it ran outside every
graph), tied to those breaks, with the hint to use ``reset_to_zero``. Graphs:
the ``sin`` before the call and the ``cos`` after it.
"""
import torch
import triton
import triton.language as tl


def zero_output(args):
    args["out_ptr"].zero_()


@triton.autotune(configs=[triton.Config({"BLOCK": 16}, pre_hook=zero_output)], key=["n"])
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 0.5, mask=mask)


def scaled(x):
    out = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    scale_kernel[grid](x, out, n)
    return out


class Net(torch.nn.Module):
    def forward(self, x):
        return scaled(x.sin()).cos()


def example_inputs():
    return torch.randn(64)


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"checksum: {Net()(example_inputs()).sum().item():.6f}")
