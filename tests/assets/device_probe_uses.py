"""Target asset: graph breaks after device probes whose answer does and does not lead to them.

`pick_device()` branches on `torch.cuda.is_available()` (DECIDES): without a GPU it goes on to a
break a GPU run never reaches (NO-GPU-PATH), which tritoninspect marks. `log_device()` asks too
(UNUSED-HERE), but its answer decides nothing before the break that follows (AFTER-UNUSED): only
the return after the break tests it, so a GPU run breaks there as well, and the break is not
marked. Nor is the one `note_device()` takes after a probe whose answer it drops (DROPPED,
AFTER-DROPPED).
"""

import torch


def pick_device():
    if torch.cuda.is_available():  # DECIDES
        return "cuda"
    torch._dynamo.graph_break()  # NO-GPU-PATH
    return "cpu"


def log_device(y):
    available = torch.cuda.is_available()  # UNUSED-HERE
    torch._dynamo.graph_break()  # AFTER-UNUSED
    return y * 2 if available else y


def note_device(y):
    torch.cuda.is_available()  # DROPPED
    torch._dynamo.graph_break()  # AFTER-DROPPED
    return y + 1


class Net(torch.nn.Module):
    def forward(self, x):
        y = torch.sin(x)
        device = pick_device()
        y = y * 2 if device == "cpu" else y
        y = log_device(y)
        return note_device(y)


def example_inputs():
    return (torch.randn(8),)
