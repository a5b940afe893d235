"""Scratch (not committed): is liger_flce's view_clone_overread finding real on the H200?"""
import json, subprocess, sys
sys.path.insert(0, "tests"); sys.path.insert(0, "tests/assets"); sys.path.insert(0, "tests/gpu")
proc = subprocess.run([sys.executable, "-m", "tritoninspect", "graph", "tests/assets/liger_flce.py:Net", "--device", "cuda",
                       "--json"], capture_output=True, text=True)
rep = json.loads(proc.stdout)
print("gpu report findings:", [(f["rule"], f["severity"]) for f in rep["findings"]])
import torch
from _hazard_expect import max_diff, outputs
import liger_flce
net = liger_flce.Net().cuda()
x, target = (t.cuda() for t in liger_flce.example_inputs())
eager = net(x, target)
compiled_net = torch.compile(net)
compiled_net(x, target)
blocks = [torch.full((128,), float("nan"), device="cuda") for _ in range(4096)]; del blocks
compiled = compiled_net(x, target)
print("eager", float(eager), "compiled", float(compiled), "diff", max_diff(outputs(eager), outputs(compiled)))
