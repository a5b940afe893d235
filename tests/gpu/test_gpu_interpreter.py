"""The GPU is the reference for what compile-only mode's interpreter computes: the assets of
tests/test_compile_only_launches.py launched on the GPU give what the compile-only tests expect
(loop variables typed as Triton compiles them, libdevice of integers and of numbers alone, a
misspelt libdevice name failing the launch), and every libdevice function the interpreter computes
is one this Triton defines. Skipped where torch sees no CUDA GPU.

    python -m pytest -q tests/gpu/test_gpu_interpreter.py
"""

from __future__ import annotations

import importlib

import pytest
import torch

from test_compile_only_launches import load_asset

pytestmark = pytest.mark.gpu


def test_loop_variables_are_typed_as_the_compile_only_test_expects() -> None:
    module = load_asset("loop_variable_kernel")
    x = torch.arange(40.0, device="cuda")
    doubled, plus_one = module.launch(x)
    torch.testing.assert_close((doubled, plus_one), (x * 2, x + 1))
    out = torch.zeros(4, dtype=torch.int32, device="cuda")
    module._loop_dtype_kernel[(1,)](out, 3)
    assert out.tolist() == [32, 32, 64, 64]
    stepped = torch.zeros(12, dtype=torch.int32, device="cuda")
    module._stepped_kernel[(1,)](stepped, 4, -1, BLOCK=4)
    assert stepped.tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 2, 3]  # as test_loop_steps_and_options_... expects


def test_libdevice_of_integers_and_numbers_alone_as_compile_only_computes_it() -> None:
    module = load_asset("libdevice_kernel")
    x = torch.randn(16, device="cuda")
    torch.testing.assert_close(module.launch_numbers(x), module.reference_numbers(x.cpu()).cuda())


def test_a_misspelt_libdevice_name_fails_the_launch_with_attribute_error() -> None:
    module = load_asset("libdevice_kernel")
    with pytest.raises(AttributeError, match="rsqrtt"):
        module.launch_misspelt(torch.ones(8, device="cuda"))


def test_every_libdevice_function_computed_is_defined_by_this_triton() -> None:
    from tritoninspect.capture.compat.libdevice import _MODULES, _functions, _table

    defined = {name for module in _MODULES for name in _functions(importlib.import_module(module))}
    assert sorted(set(_table()) - defined) == []
