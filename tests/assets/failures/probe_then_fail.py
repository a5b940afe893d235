"""A library-style helper asks for the GPU and returns None without one; the model then fails."""
import torch


def num_sms():
    if torch.cuda.is_available():
        return 132
    return None


class Net(torch.nn.Module):
    def forward(self, x):
        return x * (num_sms() + 1)


def example_inputs():
    return (torch.randn(8),)
