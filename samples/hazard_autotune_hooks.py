"""An autotuned kernel whose reset_to_zero and restore_value hooks torch.compile drops (issue 24, finding 1).

``scale_sum_kernel`` scales ``x`` in place and ``tl.atomic_add``s the sum into ``sum_ptr``; its
``@triton.autotune`` has four configs, ``reset_to_zero=["sum_ptr"]``, ``restore_value=["x_ptr"]``
and ``prune_configs_by={"early_config_prune": ...}`` (keeps the three configs with BLOCK <= 128).
Eager Triton benchmarks the configs with both hooks, so the run that counts starts from the real
values. Under torch.compile Dynamo prunes at trace time and stores a new Autotuner without the
hooks; Inductor benchmarks its three configs on the real buffers.

What tritoninspect should report: ``scale_sum_kernel`` as ``hop``, 0 graph breaks, and an
``autotune_hooks`` error: reset_to_zero and restore_value dropped (absent from the side-table
Autotuner and from Inductor's triton_meta), 3 configs benchmarked, ``x_ptr`` and ``sum_ptr``
written. On a GPU the compiled result differs from eager (compile-only mode never benchmarks).

The two other models follow the finding's actions and keep eager's result: ``NoPruneNet`` (the
configs pruned by hand, so Dynamo keeps the user's Autotuner and Inductor applies both hooks: a
note, hooks kept) and ``SingleConfigNet`` (one config, the prune function kept: Dynamo still drops
the hooks, but nothing is benchmarked; a note, harmless).
"""
import torch
import triton
import triton.language as tl

def keep_small_blocks(configs, named_args, **kwargs):
    return [c for c in configs if c.kwargs["BLOCK"] <= 128]


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 16}, num_warps=4),
        triton.Config({"BLOCK": 32}, num_warps=4),
        triton.Config({"BLOCK": 64}, num_warps=4),
        triton.Config({"BLOCK": 256}, num_warps=4),
    ],
    key=["n"], reset_to_zero=["sum_ptr"], restore_value=["x_ptr"],
    prune_configs_by={"early_config_prune": keep_small_blocks},
)
@triton.jit
def scale_sum_kernel(x_ptr, sum_ptr, scale, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask) * scale
    tl.store(x_ptr + offs, x, mask=mask)
    tl.atomic_add(sum_ptr, tl.sum(x, axis=0))


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 16}, num_warps=4),
        triton.Config({"BLOCK": 32}, num_warps=4),
        triton.Config({"BLOCK": 64}, num_warps=4),
    ],
    key=["n"], reset_to_zero=["sum_ptr"], restore_value=["x_ptr"],
)
@triton.jit
def scale_sum_unpruned_kernel(x_ptr, sum_ptr, scale, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask) * scale
    tl.store(x_ptr + offs, x, mask=mask)
    tl.atomic_add(sum_ptr, tl.sum(x, axis=0))


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=4)], key=["n"], reset_to_zero=["sum_ptr"],
                 restore_value=["x_ptr"], prune_configs_by={"early_config_prune": keep_small_blocks})
@triton.jit
def scale_sum_single_kernel(x_ptr, sum_ptr, scale, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask) * scale
    tl.store(x_ptr + offs, x, mask=mask)
    tl.atomic_add(sum_ptr, tl.sum(x, axis=0))


def _scale_sum(kernel, x):
    x = x * 1.0
    total = torch.zeros(1, device=x.device)
    n = x.numel()
    kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, total, 0.5, n)
    return x, total


class Net(torch.nn.Module):
    def forward(self, x):
        return _scale_sum(scale_sum_kernel, x)


class NoPruneNet(torch.nn.Module):
    def forward(self, x):
        return _scale_sum(scale_sum_unpruned_kernel, x)


class SingleConfigNet(torch.nn.Module):
    def forward(self, x):
        return _scale_sum(scale_sum_single_kernel, x)


def example_inputs():
    return (torch.randn(4096) / 100,)
