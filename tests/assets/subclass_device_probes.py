"""Target asset: tensor subclasses whose device `forward` asks while Dynamo traces it.

`x` is a `Logged` tensor, a subclass with its own `__torch_function__` (the minimal kind);
`w` a `Wrapped` one, a wrapper subclass as torchao's tensors are (`_make_wrapper_subclass`,
`__torch_function__`, `__torch_dispatch__`, `__tensor_flatten__`). `forward` asks both whether
they are on CUDA (LOGGED-IS-CUDA, WRAPPED-IS-CUDA, WRAPPED-DEVICE-TYPE), uses a device without
asking (NOT-A-PROBE) and launches a Triton kernel. Plain Dynamo traces it all in one graph, no
break. tritoninspect's `x.is_cuda` watch, a Python property on `torch.Tensor`, was what Dynamo's
subclass path looked up instead of torch's own descriptor: it skipped the whole frame
("Unexpected type in sourceless builder"), a graph break only the tool's run had. Each of the
three questions is a probe recorded while Dynamo traced, at its line in `forward`, not in the
`__torch_function__` Dynamo inlines to answer `x.is_cuda`.
"""

import torch
import triton
import triton.language as tl
from torch.utils import _pytree as pytree


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


class Logged(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})


class Wrapped(torch.Tensor):
    @staticmethod
    def __new__(cls, inner):
        return torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype, device=inner.device,
                                                   strides=inner.stride())

    def __init__(self, inner):
        self.inner = inner

    def __tensor_flatten__(self):
        return ["inner"], None

    @staticmethod
    def __tensor_unflatten__(inner_tensors, meta, outer_size, outer_stride):
        return Wrapped(inner_tensors["inner"])

    def __repr__(self):
        return f"Wrapped({self.inner!r})"

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        with torch._C.DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        args, kwargs = pytree.tree_map_only(Wrapped, lambda t: t.inner, (args, kwargs or {}))
        return pytree.tree_map_only(torch.Tensor, Wrapped, func(*args, **kwargs))


class Net(torch.nn.Module):
    def forward(self, x, w):
        y = torch.sin(x)
        if y.is_cuda:  # LOGGED-IS-CUDA
            y = y * 3
        z = torch.ones(16, device=y.device)  # NOT-A-PROBE
        if w.device.type == "cuda":  # WRAPPED-DEVICE-TYPE
            w = w * 3
        if not w.is_cuda:  # WRAPPED-IS-CUDA
            w = torch.cos(w)
        out = torch.empty_like(z)
        double_kernel[(triton.cdiv(z.numel(), 64),)](z, out, z.numel(), BLOCK=64)
        return y + out.sum(), w


def example_inputs():
    return (torch.randn(16).as_subclass(Logged), Wrapped(torch.randn(16)))
