"""Helpers for the project's own tests (import as ``from tests._helpers import ...``)."""

from __future__ import annotations

import torch

# Tolerances for reference-vs-PyTorch agreement. float64: both sides are exact up to
# reassociation (~1e-15 per op), so 1e-10 is tight and still robust. float32: eps is ~1.2e-7,
# recurrences over tens of steps and sums over hundreds of terms compound that to ~1e-6
# relative; 1e-5 relative / 1e-6 absolute leaves a 10x margin.
TOL = {
    torch.float64: dict(rtol=1e-10, atol=1e-10),
    torch.float32: dict(rtol=1e-5, atol=1e-6),
}


def assert_close(actual, expected, dtype=None, **overrides):
    dtype = dtype or expected.dtype
    torch.testing.assert_close(actual, expected, **{**TOL[dtype], **overrides})


# --- shared by the reference tests: purity, op recording, inputs -----------------------------

from torch.overrides import TorchFunctionMode  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402


def flat(obj):
    """Every tensor in nested tuples, lists and dicts."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from flat(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from flat(v)


def _ids(obj):
    """The nested dict structure with the identity of every entry (catches replaced entries)."""
    return {k: _ids(v) for k, v in obj.items()} if isinstance(obj, dict) else id(obj)


def call_pure(fn, *args, **kwargs):
    """Call ``fn``; assert no argument changed (values, and the structure of nested dicts) and no
    returned tensor shares memory with an argument."""
    inputs = [t for t in flat((args, kwargs)) if t.numel()]
    before = [t.clone() for t in inputs]
    structure = [_ids(a) for a in (*args, *kwargs.values()) if isinstance(a, dict)]
    out = fn(*args, **kwargs)
    for t, b in zip(inputs, before):
        assert torch.equal(t, b), f"{fn.__name__} modified an argument"
    assert structure == [_ids(a) for a in (*args, *kwargs.values()) if isinstance(a, dict)], (
        f"{fn.__name__} modified a dict argument"
    )
    storages = {t.untyped_storage().data_ptr() for t in inputs}
    for o in flat(out):
        assert o.untyped_storage().data_ptr() not in storages, f"{fn.__name__} returned an alias of an argument"
    return out


class _Record(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.names = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.add(f"{getattr(func, '__module__', '') or ''}.{getattr(func, '__name__', func)}".lower())
        return func(*args, **(kwargs or {}))


class _RecordAten(TorchDispatchMode):
    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False  # else the first use imports all of dynamo (~4 s)

    def __init__(self):
        super().__init__()
        self.names = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.add(str(func).lower())
        return func(*args, **(kwargs or {}))


def ops_called(fn, *args, **kwargs):
    """Lower-cased names of the torch functions and aten kernels ``fn`` reached."""
    with _Record() as f, _RecordAten() as a:
        fn(*args, **kwargs)
    return f.names | a.names


def randn(gen, *shape, device, dtype, scale=1.0):
    """Draw on the CPU from ``gen`` (same numbers on every device), then move."""
    return (torch.randn(*shape, generator=gen, dtype=torch.float64) * scale).to(device=device, dtype=dtype)


def check_out(t, device, dtype, shape):
    assert t.shape == shape and t.dtype == dtype and t.device.type == device.type


# --- shared by the end-to-end tests: the results schema, a submission with known bugs ---------

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from tests.mutants import ROOT, all_variants, make_submission, replace_function  # noqa: E402

RESULTS_SCHEMA = json.loads((ROOT / "schemas" / "gradescope_results.schema.json").read_text(encoding="utf-8"))


def make_buggy_submission(target: Path, modules=("optimizers", "lstm_gru", "positional")) -> Path:
    """The reference solutions with the first known-wrong variant of each of ``modules`` swapped
    in (one wrong function per module); ``bugs.txt`` lists the wrong functions."""
    make_submission(target)
    picked = {}
    for mutant in all_variants("MUTANTS"):
        if mutant.module not in picked and mutant.module in modules:
            picked[mutant.module] = mutant
    for mutant in picked.values():
        path = target / "exercises" / f"{mutant.module}.py"
        path.write_text(replace_function(path.read_text(), mutant.function.split(".")[1], mutant.source))
    target.joinpath("bugs.txt").write_text("\n".join(m.function for m in picked.values()))
    return target


def mha_params(mha) -> dict:
    """The contract's ``params`` dict of multi_head_attention, copied from an nn.MultiheadAttention."""
    W_q, W_k, W_v = mha.in_proj_weight.detach().clone().chunk(3)
    b_q, b_k, b_v = mha.in_proj_bias.detach().clone().chunk(3)
    return dict(
        W_q=W_q,
        W_k=W_k,
        W_v=W_v,
        W_o=mha.out_proj.weight.detach().clone(),
        b_q=b_q,
        b_k=b_k,
        b_v=b_v,
        b_o=mha.out_proj.bias.detach().clone(),
    )
