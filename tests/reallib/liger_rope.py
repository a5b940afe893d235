"""Rotary position embedding with Liger-Kernel's RoPE kernel (``liger_kernel.ops.LigerRopeFunction``).

Liger's ``rope_forward`` transposes ``q`` / ``k`` back to their physical layout and launches
``_triton_rope`` on them, which rotates them **in place** (the function returns views of its own
inputs); ``rope_backward`` launches the same kernel with ``BACKWARD_PASS=True`` on the incoming
gradients, again in place. ``q`` and ``k`` come from projections here, laid out the way a Llama
attention block produces them (``[B, S, H, D]`` transposed to ``[B, H, S, D]``).

What tritoninspect should report: ``_triton_rope`` (``liger_kernel/ops/rope.py``) as ``hop`` in the
forward graph and in the backward graph (the same kernel, ``BACKWARD_PASS`` False then True), with
``tensors_to_clone`` ``q_ptr``, ``k_ptr`` (the kernel writes both); 0 graph breaks, 1 compiled frame,
backward compiled. The liger wrapper ``liger_kernel.transformers.liger_rotary_pos_emb`` is not used:
it goes through Liger's ``torch.compiler.disable``d dispatcher (see liger_layer_norm.py).
"""
import torch

from liger_kernel.ops import LigerRopeFunction

HEADS, KV_HEADS, HEAD_DIM, SEQ = 4, 2, 16, 8


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = torch.nn.Linear(32, HEADS * HEAD_DIM, bias=False)
        self.k_proj = torch.nn.Linear(32, KV_HEADS * HEAD_DIM, bias=False)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, HEAD_DIM, 2).float() / HEAD_DIM))
        freqs = torch.outer(torch.arange(SEQ).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)  # [S, D]
        self.register_buffer("cos", emb.cos()[None], persistent=False)  # [1, S, D]
        self.register_buffer("sin", emb.sin()[None], persistent=False)

    def forward(self, x):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.k_proj(x).view(b, s, KV_HEADS, HEAD_DIM).transpose(1, 2)
        q, k = LigerRopeFunction.apply(q, k, self.cos, self.sin)
        return q.sum(dim=1) + k.sum(dim=1)


def example_inputs():
    return (torch.randn(2, SEQ, 32, requires_grad=True),)
