"""Scratch (not committed): fla chunk kernels in compile-only mode (interpreter, CPU) vs the H200."""
import torch
from tritoninspect.capture.session import compile_only

torch.manual_seed(0)
B, T, H, K, V = 1, 40, 2, 32, 32
q, k, v = (torch.randn(B, T, H, K) * 0.5 for _ in range(3))
g = -torch.rand(B, T, H, K) * 0.1
beta = torch.rand(B, T, H)
gh = -torch.rand(B, T, H) * 0.1
kn = torch.nn.functional.normalize(k, dim=-1)
qn = torch.nn.functional.normalize(q, dim=-1)

def runs():
    from fla.ops.gla import chunk_gla
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule
    return {
        "chunk_gla": lambda d: chunk_gla(q.to(d), k.to(d), v.to(d), g.to(d))[0],
        "chunk_gated_delta_rule": lambda d: chunk_gated_delta_rule(qn.to(d), kn.to(d), v.to(d), gh.to(d), beta.to(d))[0],
    }

with compile_only() as env:
    cpu = {name: f("cpu") for name, f in runs().items()}
    print("compile-only problems:", env.problems)
for name, f in runs().items():
    gpu = f("cuda").float().cpu()
    print(name, "max |compile-only - H200| =", (cpu[name].float() - gpu).abs().max().item(),
          "max |H200| =", gpu.abs().max().item())
