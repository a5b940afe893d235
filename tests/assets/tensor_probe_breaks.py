"""Target asset: graph breaks after tensor device probes, which Dynamo folds as it folds
`torch.cuda.is_available()`: the path after them is the CPU's in compile-only mode.

`scale()` branches on `x.is_cuda` (IS-CUDA): on CPU tensors it goes on to a break a GPU run never
reaches (CPU-PATH). `shown()` prints `x.is_cuda` (SHOWN) and breaks whatever the answer
(AFTER-SHOWN). `forward` then breaks (PLAIN-BREAK, no probe before it in forward), so the rest of it
is Dynamo's resume function; there it compares `y.device.type` with "cuda" (DEVICE-TYPE) and takes a
`print` on the CPU (PRINT-PATH). tritoninspect marks CPU-PATH and PRINT-PATH (`device_probe`: the
probe's line, in the user's function, not the resume function's name), and neither AFTER-SHOWN nor
PLAIN-BREAK.
"""

import torch


def scale(x):
    if x.is_cuda:  # IS-CUDA
        return x * 2
    torch._dynamo.graph_break()  # CPU-PATH
    return x * 3


def shown(x):
    print("on cuda:", x.is_cuda)  # SHOWN
    torch._dynamo.graph_break()  # AFTER-SHOWN
    return x + 1


class Net(torch.nn.Module):
    def forward(self, x):
        y = shown(scale(torch.sin(x)))
        torch._dynamo.graph_break()  # PLAIN-BREAK
        if y.device.type != "cuda":  # DEVICE-TYPE
            print("cpu path")  # PRINT-PATH
        return y.cos()


def example_inputs():
    return (torch.randn(8),)
