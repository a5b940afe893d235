"""The compatibility layer: scoped patches, compile-only mode, kernel identity.

The text formats torch emits (graph breaks, output code) are parsed torch-free: tests/test_textformats.py.
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

from tritoninspect.capture import compat
from tritoninspect.capture.patching import Patcher
from tritoninspect.capture.session import compile_only
from tritoninspect.model.errors import CaptureError


# --- Patcher -----------------------------------------------------------------------------------------


class Base:
    inherited = "base"


class Child(Base):
    own = "child"


def test_patcher_restores_class_attributes() -> None:
    patcher = Patcher()
    patcher.set(Child, "own", "patched")
    patcher.set(Child, "own", "patched twice")
    patcher.set(Child, "inherited", "shadow")
    patcher.set(Child, "new", "added")
    assert (Child.own, Child.inherited, Child.new) == ("patched twice", "shadow", "added")  # type: ignore[attr-defined]
    patcher.restore()
    assert Child.__dict__["own"] == "child"
    # The inherited attribute is not copied down into the subclass: it is inherited again.
    assert "inherited" not in Child.__dict__ and Child.inherited == "base"
    assert not hasattr(Child, "new")
    assert Base.inherited == "base"


def test_patcher_restores_module_and_instance_attributes() -> None:
    module = types.ModuleType("fake_module")
    module.value = 1  # type: ignore[attr-defined]
    obj = types.SimpleNamespace(slot=None)
    patcher = Patcher()
    patcher.set(module, "value", 2)
    patcher.set(module, "extra", 3)
    patcher.set(obj, "slot", "active")
    assert (module.value, module.extra, obj.slot) == (2, 3, "active")  # type: ignore[attr-defined]
    patcher.restore()
    assert module.value == 1 and not hasattr(module, "extra")  # type: ignore[attr-defined]
    assert obj.slot is None
    patcher.restore()  # a second restore has nothing left to undo
    assert module.value == 1  # type: ignore[attr-defined]


def test_patcher_restores_mapping_items_only() -> None:
    rules = {"kept": 1, "patched": 2}
    patcher = Patcher()
    patcher.set_item(rules, "patched", 20)
    patcher.set_item(rules, "added", 30)
    rules["registered meanwhile"] = 4
    assert rules == {"kept": 1, "patched": 20, "added": 30, "registered meanwhile": 4}
    patcher.restore()
    assert rules == {"kept": 1, "patched": 2, "registered meanwhile": 4}


def test_patcher_undoes_changes_it_was_told_of() -> None:
    """remember() before someone else's change: restore() puts the first value back, also when that
    someone already undid part of it (copying an inherited attribute down, deleting an added one)."""
    module = types.ModuleType("fake_module")
    module.value = 1  # type: ignore[attr-defined]
    patcher = Patcher()
    for obj, name, value in [(module, "value", 2), (module, "value", 3), (module, "extra", 4), (Child, "inherited", "x")]:
        patcher.remember(obj, name)
        setattr(obj, name, value)
    del module.extra  # type: ignore[attr-defined]
    Child.inherited = Base.inherited
    patcher.restore()
    assert module.value == 1 and not hasattr(module, "extra")  # type: ignore[attr-defined]
    assert "inherited" not in Child.__dict__ and Child.inherited == "base"


# --- compile-only mode -------------------------------------------------------------------------------

_MISSING = object()


def _patched_objects() -> dict[str, object]:
    """Everything compile_only() may replace, as the objects themselves (compared by identity)."""
    from torch.utils import _triton
    from triton.runtime import driver
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction

    caching = compat.inductor.caching_autotuner_class()
    found = {
        "JITFunction.run": JITFunction.__dict__.get("run", _MISSING),
        "JITFunction.__call__": JITFunction.__dict__.get("__call__", _MISSING),
        "Autotuner.run": Autotuner.__dict__.get("run", _MISSING),
        "CachingAutotuner.run": caching.__dict__.get("run", _MISSING),
        "driver._active": driver.__dict__.get("_active", _MISSING),
        "cpu backend": triton.backends.backends.get("cpu", _MISSING),
    }
    for name in ("_device_supports_tma", "_device_supports_tensor_descriptor"):
        found[name] = getattr(_triton, name, _MISSING)
    return found


def _assert_same(before: dict[str, object], after: dict[str, object]) -> None:
    assert before.keys() == after.keys()
    changed = [name for name in before if before[name] is not after[name]]
    assert changed == []


def test_compile_only_patches_and_restores() -> None:
    from torch.utils._triton import has_triton
    from triton.runtime import driver

    before, had_triton = _patched_objects(), has_triton()
    with compile_only():
        inside = _patched_objects()
        assert has_triton() is True
        assert driver.active.get_current_target().arch == 90
        replaced = ("JITFunction.run", "JITFunction.__call__", "Autotuner.run", "CachingAutotuner.run", "driver._active")
        assert [name for name in replaced if inside[name] is before[name]] == []
    _assert_same(before, _patched_objects())
    assert has_triton() == had_triton


def test_compile_only_restores_after_an_error() -> None:
    from torch.utils._triton import has_triton

    before, had_triton = _patched_objects(), has_triton()
    with pytest.raises(RuntimeError, match="inside"):
        with compile_only():
            raise RuntimeError("inside")
    _assert_same(before, _patched_objects())
    assert has_triton() == had_triton


def test_compile_only_restores_when_setup_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> None:
        raise CaptureError("no triton for you")

    monkeypatch.setattr(compat.compile_only, "prime_has_triton", refuse)
    before = _patched_objects()
    with pytest.raises(CaptureError):
        with compile_only():
            pass
    _assert_same(before, _patched_objects())


# --- which triton_op a kernel node came from ------------------------------------------------------------


def test_decompositions_note_the_innermost_triton_op() -> None:
    """samples/triton_op_autograd.py: a kernel of a nested triton_op, and one of a triton_op that
    only a registered backward calls, are noted with that op; node meta names the outer op only."""
    import torch

    from _expect import load_sample

    module = load_sample("triton_op_autograd")
    graphs: list[list[tuple[str, str | None, str | None]]] = []

    def keep(gm: torch.fx.GraphModule, _inputs: object) -> torch.fx.GraphModule:
        graphs.append(_hop_ops(gm))  # now: torch._dynamo.reset() empties the kernel side table
        return gm

    patcher = Patcher()
    with compile_only():
        rules_before = {name: dict(opdef._torch_dispatch_fns) for name, opdef in _sample_opdefs()}
        try:
            for mapping, key, value in compat.library.decomposition_patches():
                patcher.set_item(mapping, key, value)
            torch._dynamo.reset()
            backend = compat.inductor.aot_autograd_backend(fw_compiler=keep, bw_compiler=keep)
            torch.compile(module.Net(), backend=backend)(*module.example_inputs()).sum().backward()
        finally:
            patcher.restore()
            torch._dynamo.reset()
        assert {name: dict(opdef._torch_dispatch_fns) for name, opdef in _sample_opdefs()} == rules_before

    ns = "tisample_triton_op_autograd"
    forward, backward = graphs
    assert forward == [("mul_kernel", f"{ns}::mul", f"{ns}::mul"), ("scale_kernel", f"{ns}::scale", f"{ns}::mul")]
    # The backward node's meta names the forward op (fwd_source_fn_stack); only the note names mul_grads.
    assert backward == [("mul_grads_kernel", f"{ns}::mul_grads", f"{ns}::mul")]


def _sample_opdefs() -> list[tuple[str, object]]:
    from torch._library.custom_ops import OPDEFS

    return [(name, opdef) for name, opdef in OPDEFS.items() if name.startswith("tisample_triton_op_autograd::")]


def _hop_ops(gm: object) -> list[tuple[str, str | None, str | None]]:
    """(kernel, noted op, meta's op) of each kernel HOP node, in graph order."""
    found = []
    for node in gm.graph.nodes:  # type: ignore[attr-defined]
        if compat.hops.hop_form(node) is None:
            continue
        kernel = compat.hops.side_table_kernel(compat.hops.hop_fields(node)["kernel_idx"])
        name = compat.kernels.innermost_jit(kernel).fn.__name__
        found.append((name, compat.library.decomposed_from(node), compat.library.source_fn_op(node)))
    return found


# --- kernel identity -----------------------------------------------------------------------------------


@triton.jit  # KERNEL-LINE plain_kernel
def plain_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pass


@triton.autotune(configs=[triton.Config({"BLOCK": 16})], key=["n"])  # KERNEL-LINE stacked_kernel
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def stacked_kernel(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pass


def _layered(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pass


# Every layer bound to a module-level name: the outermost must still win.
layered_jit = triton.jit(_layered)
layered_heuristics = triton.heuristics({"EVEN": lambda args: True})(layered_jit)
layered_autotune = triton.autotune(configs=[triton.Config({"BLOCK": 32})], key=["n"])(layered_heuristics)


def marker_line(marker: str) -> int:
    return next(n for n, text in enumerate(Path(__file__).read_text().splitlines(), 1) if text.endswith(marker))


def test_innermost_jit_walks_the_decorators() -> None:
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.jit import JITFunction

    assert isinstance(stacked_kernel, Autotuner) and isinstance(stacked_kernel.fn, Heuristics)
    inner = compat.kernels.innermost_jit(stacked_kernel)
    assert isinstance(inner, JITFunction) and inner.fn.__name__ == "stacked_kernel"
    assert compat.kernels.innermost_jit(stacked_kernel.fn) is inner
    assert compat.kernels.innermost_jit(plain_kernel) is plain_kernel
    assert compat.kernels.innermost_jit(layered_autotune) is layered_jit


def test_innermost_jit_of_something_else_is_none() -> None:
    assert compat.kernels.innermost_jit(lambda: None) is None
    loop = types.SimpleNamespace()
    loop.fn = loop  # a wrapper chain that never reaches a JITFunction
    assert compat.kernels.innermost_jit(loop) is None


def test_user_kernel_object_is_the_outermost_decorator() -> None:
    assert compat.kernels.user_kernel_object(compat.kernels.innermost_jit(stacked_kernel)) is stacked_kernel
    assert compat.kernels.user_kernel_object(layered_jit) is layered_autotune
    assert compat.kernels.user_kernel_object(plain_kernel) is plain_kernel
    layers = compat.kernels.decorator_stack(compat.kernels.user_kernel_object(layered_jit))
    assert [compat.kernels.layer_name(layer) for layer in layers] == ["autotune", "heuristics", "jit"]


def _asset(name: str) -> types.ModuleType:
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, Path(__file__).parent / "assets" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_launched_autotuner_is_the_user_object_among_several_around_one_kernel() -> None:
    """torchao's hqq kernels: two Autotuners around one heuristics kernel; the launch decides which is the user's."""
    import copy

    from triton.runtime.autotuner import Autotuner

    two = _asset("two_autotuners_kernel")
    jf = two._add_one_kernel
    assert compat.kernels.user_kernel_object(jf) is two.add_one_zeroed  # no launch known: the first one found
    assert compat.kernels.user_kernel_object(jf, two.add_one_plain) is two.add_one_plain
    assert compat.kernels.user_kernel_object(jf, two.add_one_zeroed) is two.add_one_zeroed
    # Dynamo's rebuild for the heuristics: the configs deep-copied, each heuristic's value set in each
    rebuilt = copy.deepcopy(two.add_one_plain.configs)
    for config in rebuilt:
        config.kwargs["BLOCK"] = min(config.kwargs["BLOCK"], 64)
        config.kwargs["EVEN"] = True
    side_table = Autotuner(jf, jf.arg_names, rebuilt, key=[], reset_to_zero=None, restore_value=None)
    assert compat.kernels.user_kernel_object(jf, side_table) is two.add_one_plain
    assert compat.kernels.user_kernel_object(jf, jf) is two.add_one_zeroed  # a bare launch cannot tell


def test_an_eager_launch_finds_the_autotuner_it_came_through() -> None:
    """A launch seen only as the bare JITFunction (eager, or inside a custom_op at run time): the Autotuner in the
    calling frames is the user's object, not the first of several around the kernel (torchao's hqq kernels)."""
    import torch

    from tritoninspect.capture.recorder import Recorder

    two = _asset("two_autotuners_kernel")
    recorder = Recorder("inductor", compile_only=True)
    with compile_only(), recorder.installed():
        x = torch.randn(256)
        out = torch.empty_like(x)
        two.add_one_plain[lambda meta: (triton.cdiv(256, meta["BLOCK"]),)](x, out, 256)
    assert torch.equal(out, x + 1)
    (record,) = recorder.capture.kernels.values()
    assert [c["BLOCK"] for c in record.autotune_configs] == [32, 128] and record.untraceable_autotune == ()
    assert compat.kernels.launching_wrapper(two._add_one_kernel) is None  # no launch under way here


def test_a_kernel_record_names_the_autotune_settings_torch_refuses() -> None:
    """A Config pre_hook: Dynamo breaks the graph, and wrap_triton in a triton_op fails the compile."""
    from tritoninspect.capture.plain import kernel_record

    two = _asset("two_autotuners_kernel")
    jf = two._add_one_kernel
    assert kernel_record(jf, "k", two.add_one_zeroed).untraceable_autotune == ("Config.pre_hook",)
    assert kernel_record(jf, "k", two.add_one_plain).untraceable_autotune == ()
    tuned = triton.autotune(configs=[triton.Config({"BLOCK": 32})], key=["n"], warmup=5, rep=100)(jf)
    assert compat.autotune.refused(tuned) == ("warmup",)


@pytest.mark.slow
def test_the_hooks_finding_reads_the_autotuner_the_model_launched() -> None:
    """A false error before: the capture took the other Autotuner's Config pre_hooks for the launched one's."""
    import torch

    from tritoninspect.analyse.hazards.autotune import autotune_hooks
    from tritoninspect.capture.recorder import Recorder

    recorder = Recorder("inductor", compile_only=True)
    torch._dynamo.reset()
    try:
        with compile_only(), recorder.installed():
            two = _asset("two_autotuners_kernel")
            x = two.Net.example_inputs()[0]
            out = torch.compile(two.Net(), backend=recorder.backend)(x)
    finally:
        torch._dynamo.reset()
    assert torch.equal(out, (x + 1) * 2)
    (kid,) = recorder.capture.kernels
    assert len(recorder.capture.kernels[kid].autotune_configs) == 2
    user = recorder.capture.hazards.user_autotune[kid]
    assert (user.configs, user.config_pre_hooks) == (2, 0)
    (side,) = recorder.capture.hazards.side_table
    assert side.folded == ("heuristics",)
    findings = autotune_hooks(recorder.capture)
    assert findings and all(f.severity == "note" for f in findings), [f.summary for f in findings]


def test_kernel_id_and_source() -> None:
    inner = compat.kernels.innermost_jit(stacked_kernel)
    assert compat.kernels.kernel_id(plain_kernel) == f"{__name__}.plain_kernel"
    assert compat.kernels.kernel_id(inner) == f"{__name__}.stacked_kernel"
    assert compat.kernels.kernel_id(layered_jit) == f"{__name__}._layered"
    # The first decorator's line: what Inductor prints after "# Original path:".
    assert compat.kernels.kernel_source(plain_kernel) == (__file__, marker_line("# KERNEL-LINE plain_kernel"))
    assert compat.kernels.kernel_source(inner) == (__file__, marker_line("# KERNEL-LINE stacked_kernel"))
    assert compat.kernels.constexpr_params(inner) == ("BLOCK", "EVEN")


def test_mutation_timing_patches_do_not_call_module_getattr(monkeypatch: pytest.MonkeyPatch) -> None:
    """The analysis is found in each torch module's own dict: getattr ran module-level __getattr__s (torch
    2.14's torch.utils.mkldnn built its classes and warned about torch.jit.script_method on every capture)."""
    import sys
    import types

    from torch._higher_order_ops import triton_kernel_wrap as tkw

    from tritoninspect.capture.compat import mutation

    asked: list[str] = []
    lazy = types.ModuleType("torch._tritoninspect_lazy_test")
    lazy.__getattr__ = lambda name: asked.append(name) or (_ for _ in ()).throw(AttributeError(name))  # type: ignore[attr-defined]
    holder = types.ModuleType("torch._tritoninspect_holder_test")
    name = next(n for n in mutation._NAMES if hasattr(tkw, n))  # the analysis' name in this torch
    setattr(holder, name, getattr(tkw, name))
    monkeypatch.setitem(sys.modules, lazy.__name__, lazy)
    monkeypatch.setitem(sys.modules, holder.__name__, holder)
    patches = mutation.timing_patches(lambda kernel, seconds: None)
    assert asked == []
    assert any(module is holder and patched == name for module, patched, _ in patches)


def test_an_autograd_function_is_found_from_its_forward_s_frame() -> None:
    """torch 2.14's Function.apply is C++ (no frame holding `cls`): the Function is found from the frame of its
    own forward, by its ctx (tests/test_eager_causes.py failed on 2.14: no inside_forward)."""
    import sys

    import torch

    from tritoninspect.capture.compat.dynamo import autograd_function_forward

    found: list[object] = []

    class Seen(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):  # noqa: ANN001, ANN205
            found.append(autograd_function_forward(sys._getframe()))
            return x * 2

        @staticmethod
        def backward(ctx, grad):  # noqa: ANN001, ANN205
            return grad * 2

    Seen.apply(torch.ones(2, requires_grad=True))
    assert found == [Seen]


# --- torch and Triton outside the tested releases -------------------------------------------------------------


@pytest.mark.parametrize(("torch_version", "triton_version", "named"), [
    ("2.13.0+cpu", "3.7.1", None),
    ("2.11.0", "3.6.0", None),
    ("2.14.1+cu130", "3.8.0", None),
    ("2.15.0+cu132", "3.9.0", "torch 2.15.0+cu132 and triton 3.9.0 are"),
    ("2.10.0", "3.7.0", "torch 2.10.0 is"),
    ("2.14.0a0+git1234", "3.10.0", "triton 3.10.0 is"),
    ("nightly", "3.7.0", "torch nightly is"),
])
def test_untested_names_what_is_outside_the_tested_releases(torch_version: str, triton_version: str,
                                                              named: str | None) -> None:
    said = compat.versions.untested(torch_version, triton_version)
    if named is None:
        assert said is None
    else:
        assert said is not None and said.startswith(named + " outside the releases"), said
        assert "(torch 2.11-2.14, triton 3.6-3.8)" in said


def test_a_capture_error_on_an_untested_torch_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch 2.15's has_triton asks the CUDA device interface, which compile-only mode does not answer: the
    error alone ("could not make torch see Triton") would not tell a user that the release is the cause."""
    from tritoninspect.capture import session

    def refuse() -> None:
        raise CaptureError("could not make torch see Triton in compile-only mode")

    monkeypatch.setattr(compat.compile_only, "prime_has_triton", refuse)
    info = session.ModeInfo("compile-only", "test", "cpu")
    with pytest.raises(CaptureError) as raised:
        with session.mode_environment(info):
            pass
    assert raised.value.hint is None  # a tested torch: no guess about the cause
    monkeypatch.setattr(compat.versions, "untested", lambda: "torch 2.15.0 is outside the releases ...")
    with pytest.raises(CaptureError) as raised:
        with session.mode_environment(info):
            pass
    assert raised.value.message == "could not make torch see Triton in compile-only mode"
    assert raised.value.hint == "torch 2.15.0 is outside the releases ...: install a tested release, or report this"


def test_a_report_from_an_untested_torch_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    """A capture that works on an untested release still says which facts may be off."""
    import torch

    from tritoninspect.analyse import build_report
    from tritoninspect.capture import session

    monkeypatch.setattr(compat.versions, "untested", lambda: "torch 2.15.0 is outside the releases ...")
    capture = session.capture_run(torch.nn.ReLU(), [(torch.ones(2),)], info=session.ModeInfo("gpu", "x", "cpu"))
    warnings = [d for d in build_report(capture).diagnostics if d.source == "versions"]
    assert [(d.severity, d.message) for d in warnings] == [
        ("warning", "torch 2.15.0 is outside the releases ...: facts read from torch's internals may be missing or wrong")]


# --- nested torch.compile regions ---------------------------------------------------------------


@torch.compile(fullgraph=True)
def _fullgraph_print(x: torch.Tensor) -> torch.Tensor:
    y = x + 1
    print("printed in a fullgraph region")
    return y


@torch.compile
def _plain_print(x: torch.Tensor) -> torch.Tensor:
    y = x + 1
    print("printed in a plain region")
    return y


class _CallsFullgraph(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _fullgraph_print(x.sin()).cos()


class _CallsPlain(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _plain_print(x.sin()).cos()


def test_a_fullgraph_region_the_model_calls_still_raises_on_a_break() -> None:
    """`torch.compile(Net())` raises Unsupported where a `fullgraph=True` function Net calls breaks; sent to the
    recorder by force_backend alone, that region only broke, and the report showed a model that runs."""
    from tritoninspect.run.pipeline import inspect_module

    report = inspect_module(_CallsFullgraph(), (torch.randn(8),), device="cpu", stage="dynamo")
    assert report.failure is not None and report.failure.exc_type == "Unsupported", report.failure
    assert "print" in report.failure.message
    plain = inspect_module(_CallsPlain(), (torch.randn(8),), device="cpu", stage="dynamo")
    assert plain.failure is None and plain.graph_breaks
