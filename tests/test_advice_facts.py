"""The facts the advice rules rest on (tier a, no compile): how a kernel uses each pointer (its AST), what a
`.item()` value feeds (the user's source), and where a kernel node's arguments come from (an FX graph)."""

from __future__ import annotations

import operator
import textwrap

import pytest

from tritoninspect.textformats.kernel_access import pointer_uses
from tritoninspect.textformats.value_use import item_uses

LN_BWD = '''
@triton.jit
def ln_bwd(DY, X, DX, DW, DB, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    dy = tl.load(DY + row * N + cols)
    x = tl.load(X + row * N + cols)
    tl.store(DX + row * N + cols, dy * x)
    tl.atomic_add(DW + cols, dy * x)
    p = DB + cols
    tl.atomic_add(p, dy)
'''


def test_loads_stores_and_atomics_reach_their_parameters() -> None:
    uses = pointer_uses(LN_BWD)
    assert (uses["DY"], uses["X"], uses["DX"], uses["DW"], uses["DB"]) == (
        ("load",), ("load",), ("store",), ("atomic",), ("atomic",))


def test_read_modify_write_and_a_pointer_advanced_in_a_loop() -> None:
    source = '''
    def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        for i in range(4):
            v = tl.load(x_ptr + offs)
            tl.store(x_ptr + offs, v + 1)
            y_ptr += BLOCK
        tl.store(y_ptr, tl.load(x_ptr))
    '''
    uses = pointer_uses(textwrap.dedent(source))
    assert uses["x_ptr"] == ("load", "store") and uses["y_ptr"] == ("store",)


def test_a_loaded_value_is_data_not_a_pointer() -> None:
    source = '''
    def gather(idx_ptr, src_ptr, out_ptr):
        i = tl.load(idx_ptr)
        tl.store(out_ptr + i, tl.load(src_ptr + i))
    '''
    uses = pointer_uses(textwrap.dedent(source))
    assert uses == {"idx_ptr": ("load",), "src_ptr": ("load",), "out_ptr": ("store",)}


def test_block_pointers_descriptors_and_called_jit_functions() -> None:
    source = '''
    def k(a_ptr, b_ptr, c_ptr, d_desc):
        blk = tl.make_block_ptr(base=a_ptr, shape=(8,), strides=(1,), offsets=(0,), block_shape=(8,), order=(0,))
        v = tl.load(blk)
        d_desc.store([0], v)
        helper(b_ptr, v)
        unknown(c_ptr)
    '''
    helper = "def helper(p, v):\n    tl.atomic_max(p, v)\n"
    uses = pointer_uses(textwrap.dedent(source), lambda name: helper if name == "helper" else None)
    assert uses == {"a_ptr": ("load",), "b_ptr": ("atomic",), "d_desc": ("store",)}  # c_ptr: not seen


def test_unparsable_source_says_nothing() -> None:
    assert pointer_uses("def k(:") == {} and pointer_uses("x = 1") == {}


ITEM_MODEL = '''
class Net:
    def forward(self, x, count, flag):
        n = int(count.item())
        k[(triton.cdiv(n, 16),)](x, n)
        m = n * 2
        out = torch.empty(m)
        if flag.item() > 0:
            out = out + 1
        f = flag.item()
        while f > 0:
            f -= 1
        g = flag.item()
        print(g)
        return out[:n]
'''


@pytest.mark.parametrize(("line", "kinds"), [
    (4, ("kernel", "size")),   # the grid and n, then m = n * 2 sizes torch.empty, then out[:n]
    (8, ("branch",)),          # read in the if itself
    (10, ("branch",)),         # bound to f, f tested by the while
    (13, ("other",)),          # printed: not a size, not a launch
])
def test_what_an_item_value_feeds(line: int, kinds: tuple[str, ...]) -> None:
    found = item_uses(ITEM_MODEL, line)
    assert found is not None and found.kinds == kinds


def test_item_uses_unknown() -> None:
    assert item_uses(ITEM_MODEL, 2) is None  # no .item() there
    assert item_uses("def f(:", 1) is None


# --- where a kernel node's arguments come from ------------------------------------------------------


def _functional_graph() -> tuple[object, dict[str, object]]:
    """An AOT-like graph: one allocation passed as DW and DB (merged), a view of an input passed and
    written back, and an input read after the launch."""
    import torch

    from tritoninspect.capture.compat import hops

    g = torch.fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    zeros = g.call_function(torch.ops.aten.full.default, ([64], 0))
    head = g.call_function(torch.ops.aten.slice.Tensor, (x, 0, 0, 32))
    kwargs = {"X": head, "Y": y, "DW": zeros, "DB": zeros}
    hop = g.call_function(hops.HOP_FUNCTIONAL, (), {
        "kernel_idx": 0, "constant_args_idx": 0, "grid": [(1, 1, 1)], "tma_descriptor_metadata": {},
        "kwargs": kwargs, "tensors_to_clone": ["X", "DW", "DB"]})
    new_x = g.call_function(operator.getitem, (hop, "X"))
    back = g.call_function(torch.ops.aten.slice_scatter.default, (x, new_x, 0, 0, 32))
    g.call_function(torch.ops.aten.copy_.default, (x, back))
    later = g.call_function(torch.ops.aten.mul.Tensor, (y, 2))
    g.output((later,))
    return hop, kwargs


def test_buffer_records_of_a_functional_kernel_node() -> None:
    from tritoninspect.capture.buffers import buffer_records

    hop, kwargs = _functional_graph()
    records = {r.arg: r for r in buffer_records(hop, kwargs)}  # type: ignore[arg-type]
    x, y, dw, db = records["X"], records["Y"], records["DW"], records["DB"]
    assert (x.made_by, x.view, x.base, x.written_back, x.read_after) == ("input", True, "x", True, ())
    assert (y.made_by, y.view, y.read_after) == ("input", False, ("mul_tensor",))
    assert (dw.made_by, dw.fill, dw.view, dw.shares_base_with) == ("alloc", "0", False, ("DB",))
    assert db.shares_base_with == ("DW",) and db.base_op == "aten::full"
