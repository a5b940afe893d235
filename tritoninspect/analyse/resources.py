"""Kernel resources per autotune config (`--resources`), attached to each report kernel."""

from __future__ import annotations

import dataclasses
from typing import Any

from tritoninspect.model.records import Capture


def enrich_resources(capture: Capture, fields: dict[str, Any]) -> dict[str, Any]:
    """Give each kernel its `Resources`, in config order; nothing to do without --resources."""
    if not capture.resources or "kernels" not in fields:
        return {}
    return {"kernels": tuple(
        dataclasses.replace(k, resources=tuple(capture.resources[k.id])) if capture.resources.get(k.id) else k
        for k in fields["kernels"]
    )}
