"""What a benchmark sitting ran on, for its folder in benchmarks/results/ (`versions.txt`), which
benchmarks/speed_table.py names each row's machine from.

    python benchmarks/versions.py > benchmarks/results/DATE-MACHINE/versions.txt
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path


def main() -> None:
    import torch
    import triton

    print(f"python {platform.python_version()} · torch {torch.__version__} · triton {triton.__version__}")
    print("gpu:", torch.cuda.get_device_name() if torch.cuda.is_available() else "none")
    print(f"cpus: {os.cpu_count()}")
    tree = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=Path(__file__).parent,
                          capture_output=True, text=True).stdout.strip()
    print(f"tree: {tree or 'no git metadata'}")


if __name__ == "__main__":
    main()
