"""Two Autotuners around one `@triton.heuristics` kernel, as torchao 0.18's prototype/hqq/kernels.py has
(`mixed_mm_kernel_max_autotune`, with `Config(pre_hook=init_to_zero("C"))` configs, defined before
`mixed_mm_kernel_compute_bound`, without hooks): the model launches the one without hooks, and the
heuristics make Dynamo rebuild it in its side table. Written for tests/test_compat.py."""

import torch
import triton
import triton.language as tl


def _zero_out(nargs):
    nargs["out_ptr"].zero_()


@triton.jit
def _add_one_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


# Like torchao's MIXED_MM_HEURISTICS, one heuristic changes a value the configs set.
_add_one = triton.heuristics({"BLOCK": lambda args: min(args["BLOCK"], 64),
                              "EVEN": lambda args: args["n"] % args["BLOCK"] == 0})(_add_one_kernel)
add_one_zeroed = triton.autotune(
    configs=[triton.Config({"BLOCK": b}, pre_hook=_zero_out) for b in (32, 64, 128)], key=["n"])(_add_one)
add_one_plain = triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (32, 128)], key=["n"])(_add_one)


class Net(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        add_one_plain[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
        return out * 2

    @staticmethod
    def example_inputs():
        return (torch.randn(256),)
