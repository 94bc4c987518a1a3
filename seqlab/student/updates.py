"""The labs' optimizer steps, counted where they happen: every one the student's own ``adam``.

Shared by the grader and the student's own tests: this file ships with the student release as
tests/_updates.py, unchanged, so both count the steps the same way and refuse a loop in the same
words. It imports nothing but torch.

Every lab's docstring says how its parameters move: each tensor in ``params`` takes one step of
the student's own ``adam`` per training step, with its own state, the lab's ``lr`` and adam's
default betas and eps, and ``params_out`` is what those steps gave. The losses alone cannot check
this to the end of a run: a task lab's float32 run drifts from its float64 replay, so a loop that
follows the protocol for many steps and then moves its weights by another rule (a hand-written
SGD, Adam at other settings, pasted weights) can stay inside the replay's widened bounds late in
a chaotic run. So during a lab's call the student's ``adam`` is wrapped (``UpdateTap``): each call
is counted with its settings, and the parameters it returned at the last step are kept. Then
``update_problem`` holds the tally to the docstring's rule: ``steps x tensors`` calls, every one
at the lab's settings, every call after the first step taking a tensor the student's ``adam``
returned the step before (a chain: the weights move by adam and by nothing else between its
steps), and every returned parameter equal to one the student's ``adam`` returned.

In the grader the tap runs in the student's process (installed for a lab's call only) and runs none of the student's code beyond their ``adam`` itself: arguments are read
by exact type checks only, and its bookkeeping runs with the call's recorders paused. The chain
stops a loop that calls ``adam`` as the rule says and moves its weights by another rule (the
calls' results thrown away, or other weights laundered through a last call with a zero
gradient). What it cannot see: a loop that keeps adam's chain and feeds it gradients that are
not its loss's (then the losses and the held-out test are what stand).
"""

from __future__ import annotations

import contextlib
import inspect
from collections import Counter, deque
from collections.abc import Callable
from typing import Any

import torch


def _adam_signature(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):  # type: ignore[no-untyped-def]
    """The contract's ``optimizers.adam`` (tests/labs/test_lab_updates.py holds them equal)."""


ADAM_SIGNATURE = inspect.signature(_adam_signature)
# A lab's parameters are 5 to 20 tensors: the last step's results are all kept.
MAX_KEPT = 64
TENSORS = (torch.Tensor, torch.nn.Parameter)


_DEFAULTS = {name: p.default for name, p in ADAM_SIGNATURE.parameters.items() if p.default is not p.empty}


def bind(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """adam's arguments by name, defaults filled in; None for a call that does not bind."""
    if len(args) == 3 and type(kwargs) is dict and all(k in _DEFAULTS for k in kwargs):
        # the labs' own call, adam(w, dw, state, lr=lr): a tenth of Signature.bind's time
        return {"w": args[0], "dw": args[1], "state": args[2], **_DEFAULTS, **kwargs}
    try:
        bound = ADAM_SIGNATURE.bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    return dict(bound.arguments)


def _number(value: Any) -> float | None:
    return float(value) if type(value) in (int, float) else None


def setting(arguments: dict[str, Any] | None) -> str:
    """One call's ``lr``, ``betas`` and ``eps`` in words, or why they cannot be read."""
    if arguments is None:
        return "arguments that do not fit adam(w, dw, state, lr, betas, eps)"
    lr, eps, betas = _number(arguments["lr"]), _number(arguments["eps"]), arguments["betas"]
    pair = tuple(_number(b) for b in betas) if type(betas) in (tuple, list) and len(betas) == 2 else (None,)
    if lr is None or eps is None or None in pair:
        return "lr, betas or eps that are not plain Python numbers"
    return f"lr={lr:g}, betas=({pair[0]:g}, {pair[1]:g}), eps={eps:g}"


def expected_setting(lr: float) -> str:
    """The labs' rule for every step: the lab's ``lr``, adam's default betas and eps."""
    return setting(bind((None, None, {}), {"lr": lr}))


class UpdateTap:
    """The student's ``adam`` (``own``), counted. ``paused`` keeps the tap's own bookkeeping out
    of the call's recorders (the grader's); ``keep`` is the number of tensors trained."""

    def __init__(self, own: Callable[..., Any], keep: int, paused: Callable[[], Any] = contextlib.nullcontext):
        self.own, self.paused = own, paused
        self.calls = 0
        self.keep = min(max(keep, 1), MAX_KEPT)
        # calls after the first step whose ``w`` is no tensor adam returned the step before
        self.unchained = 0
        self.settings: Counter[str] = Counter()
        self.last: deque[torch.Tensor | None] = deque(maxlen=self.keep)

        # What the student's code is given in place of adam: a plain function, so the tally is
        # reached only through its closure (a dunder the subset refuses), never as an attribute
        # the loop could write (``adam.calls = ...``).
        def adam(*args: Any, **kwargs: Any) -> Any:
            return self(*args, **kwargs)

        self.wrapper = adam

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self.paused(), torch.no_grad():
            arguments = bind(args, kwargs)
            said = setting(arguments)
            # read before adam runs: an adam that writes w in place returns what w then holds
            chained = self.calls < self.keep or self.keep == MAX_KEPT or self._returned_before(arguments)
        result = self.own(*args, **kwargs)
        with self.paused(), torch.no_grad():
            self.calls += 1
            self.unchained += not chained
            self.settings[said] += 1
            # exact types only: nothing of a subclass's runs here
            w_next = result[0] if type(result) is tuple and len(result) == 2 else None
            exact = type(w_next) in TENSORS
            self.last.append(torch.Tensor.clone(torch.Tensor.detach(w_next)) if exact else None)  # type: ignore[arg-type]
        return result

    def _returned_before(self, arguments: dict[str, Any] | None) -> bool:
        """Whether this call's ``w`` holds what one of the last step's calls returned."""
        w = arguments.get("w") if arguments is not None else None
        if type(w) not in TENSORS:  # exact types only: nothing of a subclass's runs here
            return False
        return any(t is not None and _same(t, w) for t in self.last)  # type: ignore[arg-type]

    def report(self) -> dict[str, Any]:
        """Plain data for the grader, which checks its types before it reads them."""
        last = [t for t in self.last if t is not None]
        return {"calls": self.calls, "settings": dict(self.settings), "last": last, "unchained": self.unchained}


def _same(kept: torch.Tensor, w: torch.Tensor) -> bool:
    """Equal values, NaN equal to NaN: a run that went to NaN is the losses' to name, not the chain's."""
    if kept.shape != w.shape or kept.dtype != w.dtype:
        return False
    return torch.equal(kept, w) or bool(torch.allclose(kept, w, rtol=0.0, atol=0.0, equal_nan=True))


def tensors(tree: Any, path: str = "params_out") -> list[tuple[str, torch.Tensor]]:
    """The tensors of a (nested) dict of parameters, by path."""
    if type(tree) in TENSORS:
        return [(path, tree)]
    if type(tree) is dict:
        return [found for key, value in tree.items() for found in tensors(value, f"{path}[{key!r}]")]
    return []


def update_problem(function: str, tally: dict[str, Any], params_out: Any, steps: int, lr: float) -> str | None:
    """Why a lab's run did not move its parameters by the rule of its docstring, or None."""
    returned = tensors(params_out)
    want_calls, want_setting = steps * len(returned), expected_setting(lr)
    rule = (
        f"each of the {len(returned)} tensors takes one step of your adam per training step "
        f"({steps} steps: {want_calls} calls), at {want_setting}, each step from what the step before "
        "gave, and params_out is what the last steps gave"
    )
    if not tally.get("calls") and want_calls:
        # It is counted where it is looked up by name when the lab runs: a reference kept
        # earlier (a class attribute, a default argument, a partial made at import) is not.
        return (
            f"{function}: your adam was not called by its name during the run; {rule} (call adam "
            "from your optimizers module inside the training loop, e.g. after `from .optimizers import adam`)"
        )
    if tally.get("calls") != want_calls:
        return f"{function}: your adam was called {tally.get('calls', 0)} times; {rule}"
    other = {said: n for said, n in tally.get("settings", {}).items() if said != want_setting}
    if other:
        said, n = max(other.items(), key=lambda item: item[1])
        return f"{function}: {n} of your adam's {want_calls} calls had {said}; {rule}"
    unchained = tally.get("unchained", 0)
    if unchained:
        return (
            f"{function}: {unchained} of your adam's {want_calls} calls took weights that are not what your adam "
            f"returned for them the step before (they were moved by something else between steps); {rule}"
        )
    last = tally.get("last", [])
    for path, tensor in returned:
        if not any(t.shape == tensor.shape and t.dtype == tensor.dtype and torch.equal(t, tensor) for t in last):
            return f"{function}: {path} is not what your adam returned at the last step; {rule}"
    return None
