"""Target asset: a device probe inside forward, as Liger-Kernel's `infer_device()` makes one.

`pick_device()` asks `torch.cuda.is_available()`; without a GPU (compile-only mode keeps the
answer honest) it goes on to code that breaks the graph (Liger's goes on to import
`transformers`), which a GPU run never reaches. The second break, in `forward` itself, follows no
probe. tritoninspect must mark the first break (`device_probe`: this file, the PROBE line, in
pick_device) and not the second, and list the probe, traced and eager, in a warning.
"""

import torch

ANSWER_AT_IMPORT = torch.cuda.is_available()  # IMPORT-PROBE


def pick_device():
    if torch.cuda.is_available():  # PROBE
        return "cuda"
    torch._dynamo.graph_break()  # NO-GPU-PATH
    return "cpu"


class Net(torch.nn.Module):
    def forward(self, x):
        y = torch.sin(x)
        device = pick_device()  # CALL
        y = y * 2 if device == "cpu" else y
        torch._dynamo.graph_break()  # PLAIN-BREAK
        return y + 1


def example_inputs():
    return (torch.randn(8),)
