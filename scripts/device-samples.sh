#!/usr/bin/env bash
# Run every sample through `tritoninspect graph` on the GPU machine, on the GPU
# and in forced compile-only mode (--device cpu); pack the JSON reports and
# stderr logs into $OUT/reports.tgz (the device tool brings back few files).
# Usage (device machine, repo root): bash scripts/device-samples.sh [sample ...]
set -u
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
out="${OUT:-./device-out}"
work=$(mktemp -d)
mkdir -p "$out" "$work/gpu" "$work/cpu"
samples=("$@")
[ ${#samples[@]} -gt 0 ] || samples=($(cd samples && ls *.py | sed 's/\.py$//'))
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())'
for s in "${samples[@]}"; do
  for dev in cuda cpu; do
    dir=$([ "$dev" = cuda ] && echo gpu || echo cpu)
    start=$(date +%s%N)
    python3 -m tritoninspect graph "samples/$s.py:Net" --device "$dev" --json >"$work/$dir/$s.json" 2>"$work/$dir/$s.err"
    rc=$?
    printf '%-20s %-5s rc=%s %6d ms\n' "$s" "$dev" "$rc" $(( ($(date +%s%N) - start) / 1000000 ))
    [ $rc -eq 0 ] || tail -n 15 "$work/$dir/$s.err"
  done
done
tar czf "$out/reports.tgz" -C "$work" .
