"""tritoninspect: see what torch.compile did with your user-defined Triton kernels."""

__version__ = "0.1.0"
