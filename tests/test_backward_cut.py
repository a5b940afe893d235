"""--backward on a model whose raw kernel launch cuts autograd: the capture records that
backward did not run and which parameters got no gradient; the advice says why."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tritoninspect.analyse.advice import advise
from tritoninspect.run.pipeline import inspect_module

ASSET = Path(__file__).parent / "assets" / "grad_cut_model.py"


def _model_module():
    spec = importlib.util.spec_from_file_location("grad_cut_model", ASSET)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_backward_through_a_raw_kernel_is_reported_not_silent() -> None:
    m = _model_module()
    report = inspect_module(m.ParamModel(), m.ParamModel.example_inputs(), device="cpu", backward=True,
                            stage="aot")
    assert report.failure is None and report.meta.backward
    assert report.meta.backward_skipped_calls == 1
    assert set(report.meta.params_without_grad) == {"lin.weight", "lin.bias", "bias"}
    (a,) = [a for a in advise(report) if a.rule == "backward_cut"]
    assert "scale_bias_kernel has no autograd formula" in a.finding and "lin.weight" in a.finding


@pytest.mark.slow
def test_backward_that_reaches_every_parameter_says_nothing() -> None:
    import torch

    lin = torch.nn.Linear(4, 4)
    report = inspect_module(lin, (torch.randn(2, 4),), device="cpu", backward=True, stage="aot")
    assert report.meta.backward_skipped_calls == 0 and report.meta.params_without_grad == ()
    assert [a for a in advise(report) if a.rule == "backward_cut"] == []
