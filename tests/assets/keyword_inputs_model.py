"""A model called by keyword, as Hugging Face models are: example_inputs() returns a dict."""

import torch
import triton
import triton.language as tl


@triton.jit
def masked_scale_kernel(x_ptr, m_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * tl.load(m_ptr + offs, mask=mask), mask=mask)


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)

    def forward(self, input_ids, attention_mask=None, *, scale: float = 1.0):
        h = self.lin(input_ids) * scale
        if attention_mask is None:  # a call without the mask launches no kernel
            return h
        out = torch.empty_like(h)
        masked_scale_kernel[(triton.cdiv(h.numel(), 64),)](h, attention_mask, out, h.numel(), BLOCK=64)
        return out.relu()


def example_inputs():
    return {"input_ids": torch.randn(2, 16), "attention_mask": torch.ones(2, 16), "scale": 2.0}


def positional_inputs():
    """The same call, positionally (scale is keyword-only, so it keeps its default 1.0)."""
    return torch.randn(2, 16), torch.ones(2, 16)
