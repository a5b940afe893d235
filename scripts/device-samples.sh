#!/usr/bin/env bash
# Kept for old notes: the sample part of scripts/gpu-tests (every sample on the GPU and in
# forced compile-only mode, with --resources, compared; packed into $OUT/gpu-results.tgz).
# Usage (device machine, repo root): bash scripts/device-samples.sh [sample ...]
exec bash "$(dirname "${BASH_SOURCE[0]}")/gpu-tests" --samples-only "$@"
