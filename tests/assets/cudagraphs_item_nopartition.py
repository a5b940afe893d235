"""tests/assets/cudagraphs_item.py with Inductor's graph partitions off: the workaround for torch's
CUDA-graph trees failing to record the partition after the `.item()` (pytorch/pytorch#189123). Inductor
then keeps the whole graph out of CUDA graphs for the data-dependent op, and the model runs."""
import torch._inductor.config

from cudagraphs_item import Net, example_inputs  # noqa: F401

torch._inductor.config.graph_partition = False
