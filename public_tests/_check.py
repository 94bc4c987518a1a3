"""Helpers of the public tests: run your function and explain any difference in plain words.

Every failure names the function, the input case, the largest absolute error (and where it is),
and the values expected and got, for example::

    attention.causal_mask, case T=3: output: 3 of 9 values differ; max abs error 1 at index (0, 1)
    (got True, expected False)
      expected: [[True, False, False], [True, True, False], [True, True, True]]
      got:      [[True, True, True], [True, True, True], [True, True, True]]

The hidden tests your instructor grades with word their failures the same way (on larger,
random inputs, compared with a reference implementation).
"""

from __future__ import annotations

import inspect
import math

import pytest
import torch
from _forbidden import watched

# Worked values are small and computed in float64: a correct function is exact to ~1e-15, so
# 1e-6 (relative) leaves plenty of room for another order of operations, while every known
# mistake (a swapped gate, a missing scale) is off by far more.
ATOL, RTOL = 1e-8, 1e-6
FLOAT32_ATOL, FLOAT32_RTOL = 1e-5, 1e-4
MAX_SHOWN = 24  # print whole tensors up to this many values
# One thread, as the grader runs: these tests' tensors are tiny, and on a busy machine threads
# only wait for each other (the lab tests took 3 s with the default, 0.2 s with one).
torch.set_num_threads(1)


class NotImplementedYet(Exception):
    pass


def call(qualname: str, fn, *args, case: str, **kwargs):
    """Run ``fn(*args, **kwargs)`` as the hidden tests do, then check the contract's purity rules.

    A stub that still raises NotImplementedError fails with "not implemented yet"; an argument
    modified in place or returned (or a view of one) fails with the rule it breaks.
    """
    __tracebackhide__ = True
    before = _snapshot((args, kwargs))
    try:
        with watched(qualname):  # a forbidden operation fails here, in the grader's words
            out, missing = fn(*args, **kwargs), False
    except NotImplementedError:
        out, missing = None, True
    if missing:  # failed outside the except block, so no "during handling of..." chain is printed
        module = qualname.split(".")[0]
        pytest.fail(
            f"{qualname}: not implemented yet (exercises/{module}.py still raises NotImplementedError)", pytrace=False
        )
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = []
    changed = _first_change(before, (args, kwargs), "", names)
    if changed:
        pytest.fail(
            f"{qualname}, case {case}: modified its argument {changed} in place; functions must be pure "
            f"(work on new tensors / a new dict)",  # the grader's words, after the case
            pytrace=False,
        )
    alias = _aliased(out, (args, kwargs))
    if alias:
        pytest.fail(
            f"{qualname}, case {case}: returned {alias}, which is an argument or a view of one; return a new "
            f"tensor (e.g. .clone())",
            pytrace=False,
        )
    return out


def unpack(qualname: str, value, names: tuple[str, ...], *, case: str) -> tuple:
    """The returned tuple, after checking that it has ``len(names)`` items."""
    __tracebackhide__ = True
    if not isinstance(value, (tuple, list)) or len(value) != len(names):
        got = type(value).__name__ + (f" of {len(value)}" if isinstance(value, (tuple, list)) else "")
        pytest.fail(f"{qualname}, case {case}: should return a tuple ({', '.join(names)}), got a {got}", pytrace=False)
    return tuple(value)


def check_tensor(qualname: str, value, *, case: str, shape: tuple, dtype: torch.dtype, what: str = "output"):
    """Fail unless ``value`` is a tensor of this shape and dtype (on the CPU, where these tests run)."""
    __tracebackhide__ = True
    if not isinstance(value, torch.Tensor):
        pytest.fail(
            f"{qualname}, case {case}: {what} should be a torch.Tensor, got {type(value).__name__}", pytrace=False
        )
    if tuple(value.shape) != tuple(shape):
        pytest.fail(
            f"{qualname}, case {case}: {what} has shape {tuple(value.shape)}, expected {tuple(shape)}", pytrace=False
        )
    if value.dtype != dtype:
        hint = " (keep the dtype of the inputs)" if dtype.is_floating_point else ""
        pytest.fail(f"{qualname}, case {case}: {what} has dtype {value.dtype}, expected {dtype}{hint}", pytrace=False)


def check_close(
    qualname: str,
    got,
    expected,
    *,
    case: str,
    what: str = "output",
    atol: float | None = None,
    rtol: float | None = None,
):
    """Fail unless ``got`` matches ``expected`` (a tensor or nested lists of numbers/bools).

    Shape first, then values: ``|got - expected| <= atol + rtol * |expected|`` everywhere.
    """
    __tracebackhide__ = True
    if not isinstance(got, torch.Tensor):
        pytest.fail(
            f"{qualname}, case {case}: {what} should be a torch.Tensor, got {type(got).__name__}", pytrace=False
        )
    want = _as_expected(expected)
    if tuple(got.shape) != tuple(want.shape):
        pytest.fail(
            f"{qualname}, case {case}: {what} has shape {tuple(got.shape)}, expected {tuple(want.shape)}", pytrace=False
        )
    a = got.detach().cpu()
    e = want.detach().cpu()
    if e.dtype == torch.bool or not e.is_floating_point():
        differ = a.to(e.dtype) != e
        if bool(differ.any()):
            index = tuple(int(i) for i in differ.nonzero()[0])
            pytest.fail(
                f"{qualname}, case {case}: {what}: {int(differ.sum())} of {e.numel()} values differ; first at "
                f"index {_fmt_index(index)} (got {_item(a, index)}, expected {_item(e, index)})" + _show(a, e),
                pytrace=False,
            )
        return
    if atol is None:
        atol, rtol = _default_tolerance(got)
    a64, e64 = a.to(torch.float64), e.to(torch.float64)
    err, bad = _out_of_tolerance(a64, e64, atol, rtol)
    if bool(bad.any()):
        flat = int(torch.argmax(torch.where(bad, err, torch.full_like(err, -1.0))))
        index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), e.shape)) if e.dim() else ()
        where = f" at index {_fmt_index(index)}" if index else ""
        pytest.fail(
            f"{qualname}, case {case}: {what}: {int(bad.sum())} of {e.numel()} values out of tolerance; "
            f"max abs error {float(err.max()):.3g}{where} (got {float(a64.reshape(-1)[flat]):.6g}, "
            f"expected {float(e64.reshape(-1)[flat]):.6g}); tolerance atol={atol:g}, rtol={rtol:g}" + _show(a64, e64),
            pytrace=False,
        )


def check_batch_first(qualname: str, got, expected, *, case: str, what: str, step: str = "state"):
    """``check_close`` for a batch-first sequence ``(B, T, ...)``, B != T, both over 1.

    When ``got`` holds the right values in the wrong places, the usual slip is named: results
    collected time-major (a stack along dim 0 gives ``(T, B, ...)``) and then reshaped to
    ``(B, T, ...)``, or not reordered at all.
    """
    __tracebackhide__ = True
    want = _as_expected(expected)
    B, T = want.shape[:2]
    if isinstance(got, torch.Tensor) and B > 1 and T > 1:
        time_major = want.transpose(0, 1)  # what a stack along dim 0 gives: (T, B, ...)
        slips = {
            "reshape": (
                time_major.reshape(want.shape),
                f"{what}[b, t] should be the {step} of sequence b at step t, but yours holds the "
                f"{step}s stacked time-major (T, B, ...) and then reshaped (or viewed) to (B, T, ...). "
                f"A reshape keeps the memory order, so it mixes the batch and time axes; swap axes "
                f"0 and 1 with .transpose(0, 1) instead, or stack along dim=1",
            ),
            "time-major": (
                time_major,
                f"{what} is time-major (T, B, ...): stack along dim=1 (or .transpose(0, 1)) to make "
                f"it batch-first (B, T, ...)",
            ),
        }
        for slip, message in slips.values():
            if _close(got, slip) and not _close(got, want):
                pytest.fail(f"{qualname}, case {case}: {message}", pytrace=False)
    check_close(qualname, got, want, case=case, what=what)


def _as_expected(expected) -> torch.Tensor:
    """An expected value as a tensor: nested lists of floats become float64 (literals are exact
    decimals, not float32)."""
    want = expected if isinstance(expected, torch.Tensor) else torch.tensor(expected)
    if not isinstance(expected, torch.Tensor) and want.is_floating_point():
        want = torch.tensor(expected, dtype=torch.float64)
    return want


def _default_tolerance(got: torch.Tensor) -> tuple[float, float]:
    return (FLOAT32_ATOL, FLOAT32_RTOL) if got.dtype == torch.float32 else (ATOL, RTOL)


def _out_of_tolerance(a64: torch.Tensor, e64: torch.Tensor, atol: float, rtol: float):
    """The absolute error (a NaN counts as infinite) and where it exceeds ``atol + rtol * |e|``."""
    err = (a64 - e64).abs()
    err = torch.where(torch.isnan(err), torch.full_like(err, math.inf), err)
    return err, err > atol + rtol * e64.abs()


def _close(got: torch.Tensor, want: torch.Tensor) -> bool:
    """Whether check_close would pass ``got`` against ``want`` with its default tolerance."""
    if tuple(got.shape) != tuple(want.shape):
        return False
    a, e = got.detach().cpu().to(torch.float64), want.detach().cpu().to(torch.float64)
    atol, rtol = _default_tolerance(got)
    return not bool(_out_of_tolerance(a, e, atol, rtol)[1].any())


def randn(gen: torch.Generator, *shape, dtype=torch.float64, scale: float = 1.0):
    """Random inputs for the shape and dtype checks (values do not matter there)."""
    return (torch.randn(*shape, generator=gen, dtype=torch.float64) * scale).to(dtype)


# --- internals ------------------------------------------------------------------------------


def _fmt_index(index) -> str:
    return "(" + ", ".join(str(i) for i in index) + ("," if len(index) == 1 else "") + ")"


def _item(t: torch.Tensor, index):
    v = t[index].item() if index else t.item()
    return v if isinstance(v, bool) else (f"{v:.6g}" if isinstance(v, float) else v)


def _show(got: torch.Tensor, want: torch.Tensor) -> str:
    if want.numel() > MAX_SHOWN:
        return ""

    def fmt(t):
        if t.dtype == torch.bool or not t.is_floating_point():
            return str(t.tolist())
        return str(_round(t.tolist()))

    return f"\n  expected: {fmt(want)}\n  got:      {fmt(got)}"


def _round(x):
    if isinstance(x, list):
        return [_round(v) for v in x]
    return float(f"{x:.6g}")


def _snapshot(obj):
    if isinstance(obj, torch.Tensor):
        return obj.detach().clone()
    if isinstance(obj, (list, tuple)):
        return type(obj)(_snapshot(x) for x in obj)
    if isinstance(obj, dict):
        return {k: _snapshot(v) for k, v in obj.items()}
    return obj


def _first_change(before, after, path, names=()):
    """Where an argument was changed in place, by its parameter name (and key or index in it)."""
    if path == "":
        (args_b, kwargs_b), (args_a, kwargs_a) = before, after
        for i, (b, a) in enumerate(zip(args_b, args_a)):
            found = _first_change(b, a, names[i] if i < len(names) else f"#{i + 1}")
            if found:
                return found
        for key in kwargs_b:
            found = _first_change(kwargs_b[key], kwargs_a[key], key)
            if found:
                return found
        return None
    if isinstance(before, torch.Tensor):
        if not isinstance(after, torch.Tensor) or after.shape != before.shape or after.dtype != before.dtype:
            return path
        same = (
            (after == before) | (torch.isnan(after) & torch.isnan(before))
            if before.is_floating_point()
            else (after == before)
        )
        return None if bool(same.all()) else path
    if isinstance(before, (list, tuple)):
        if not isinstance(after, (list, tuple)) or len(after) != len(before):
            return path
        for i, (b, a) in enumerate(zip(before, after)):
            found = _first_change(b, a, f"{path}[{i}]")
            if found:
                return found
        return None
    if isinstance(before, dict):
        if not isinstance(after, dict) or set(after) != set(before):
            return f"{path} (its keys)"
        for key in before:
            found = _first_change(before[key], after[key], f"{path}[{key!r}]")
            if found:
                return found
        return None
    return None


def _tensors(obj, path=""):
    if isinstance(obj, torch.Tensor):
        yield path, obj
    elif isinstance(obj, (list, tuple)):
        for i, x in enumerate(obj):
            yield from _tensors(x, f"{path}[{i}]")
    elif isinstance(obj, dict):
        for k, x in obj.items():
            yield from _tensors(x, f"{path}[{k!r}]")


def _aliased(out, inputs):
    storages = {}
    for _, t in _tensors(inputs):
        if t.numel():
            storages[t.untyped_storage().data_ptr()] = True
    for path, t in _tensors(out):
        if t.numel() and t.untyped_storage().data_ptr() in storages:
            return "output" + path
    return None
