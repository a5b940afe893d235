"""One kernel, three ways to use it under CUDA graphs (``--cudagraphs``, ``mode="reduce-overhead"``).

What tritoninspect should report with ``graph --cudagraphs``:

- ``Net``: ``scale_inplace_kernel`` writes its input ``x`` in place (``x *= 2``). The compiled graph
  mutates a graph input that is neither a parameter nor a buffer, so Inductor's CUDA-graph tree runs it
  without a CUDA graph: "skipping cudagraphs due to mutated inputs (1 instances)", tied to the kernel's
  ``x_ptr`` and its launch line. On a GPU: no recording, no replay, every call eager (a warning).
- ``FunctionalNet``: the same kernel writes into ``torch.empty_like(x)`` and returns it: no input is
  written, the graph is recorded once and replayed from the third call.
- ``BufferNet``: the kernel updates a registered buffer in place (a running scale): a buffer is a static
  input, which the tree lets a graph write; recorded and replayed.

On a CPU-only machine the same verdicts are predicted from Inductor's own checks.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_inplace_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        y = torch.sin(x)
        scale_inplace_kernel[(triton.cdiv(x.numel(), 16),)](x, x.numel(), BLOCK=16)
        return y + x


class FunctionalNet(torch.nn.Module):
    def forward(self, x):
        y = torch.sin(x)
        out = torch.empty_like(x)
        scale_kernel[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), BLOCK=16)
        return y + out


class BufferNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("running", torch.ones(64))

    def forward(self, x):
        scale_inplace_kernel[(triton.cdiv(self.running.numel(), 16),)](self.running, self.running.numel(), BLOCK=16)
        return torch.sin(x) * self.running


def example_inputs():
    return (torch.randn(64),)


if __name__ == "__main__":
    torch.manual_seed(0)
    for cls in (Net, FunctionalNet, BufferNet):
        print(f"{cls.__name__} checksum: {cls()(*example_inputs()).sum().item():.6f}")
