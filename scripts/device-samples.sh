#!/usr/bin/env bash
# Run every sample through `tritoninspect graph` on the GPU machine, on the GPU
# and in forced compile-only mode (--device cpu), all in parallel; the JSON
# reports and stderr logs are packed into $OUT/reports.tgz as each finishes
# (the device tool brings back few files, and a run cut short keeps what it has).
# Usage (device machine, repo root): bash scripts/device-samples.sh [sample ...]
set -u
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
out="${OUT:-./device-out}"
work=$(mktemp -d)
mkdir -p "$out" "$work/gpu" "$work/cpu"
samples=("$@")
[ ${#samples[@]} -gt 0 ] || samples=($(cd samples && ls *.py | sed 's/\.py$//'))
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())'

one() {  # sample device
  local s=$1 dev=$2 dir start rc
  dir=$([ "$dev" = cuda ] && echo gpu || echo cpu)
  start=$(date +%s%N)
  python3 -m tritoninspect graph "samples/$s.py:Net" --device "$dev" --json >"$work/$dir/$s.json" 2>"$work/$dir/$s.err"
  rc=$?
  printf '%-20s %-5s rc=%s %6d ms\n' "$s" "$dev" "$rc" $(( ($(date +%s%N) - start) / 1000000 ))
  [ $rc -eq 0 ] || tail -n 15 "$work/$dir/$s.err"
  (flock 9; tar czf "$out/reports.tgz" -C "$work" .) 9>"$work/.lock"
}
for s in "${samples[@]}"; do
  one "$s" cuda &
  one "$s" cpu &
done
wait
