"""Kernel resources per autotune config (`--resources`), attached to each report kernel."""

from __future__ import annotations

import dataclasses
from typing import Any

from tritoninspect.capture.records import Capture, ResourceRecord
from tritoninspect.report import Kernel, Resources


def enrich_resources(capture: Capture, fields: dict[str, Any]) -> dict[str, Any]:
    """Give each kernel its `ResourceRecord`s, in config order; nothing to do without --resources."""
    if not capture.resources or "kernels" not in fields:
        return {}
    return {"kernels": tuple(_with_resources(k, capture.resources) for k in fields["kernels"])}


def _with_resources(kernel: Kernel, records: list[ResourceRecord]) -> Kernel:
    mine = tuple(_resources(r) for r in records if r.kernel_id == kernel.id)
    return dataclasses.replace(kernel, resources=mine) if mine else kernel


def _resources(record: ResourceRecord) -> Resources:
    return Resources(
        config=dict(record.config), target=record.target, source=record.source, registers=record.registers,
        shared=record.shared, spills=record.spills, num_warps=record.num_warps, num_stages=record.num_stages,
    )
