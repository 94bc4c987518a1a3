"""A contract property the labs rely on, tested with the function: gradients flow through it.

The recall, reverser and selective-copy labs train with autograd *through your own functions*
(``softmax_cross_entropy``, the GRU, attention and the Transformer blocks, the selective scan and
its parts). A function can give the right values and still break there: a write into a tensor
autograd saved for the backward pass ("modified by an inplace operation"), a ``.detach()``,
``.data``, ``.item()`` or ``torch.no_grad()`` on the way. ``check_autograd`` backpropagates
through your function on small float64 inputs and checks the gradients against finite
differences of your own function's values, so such a function fails its own test, by name,
before a lab fails for it. The rule and its words are the grader's own (``_gradcheck.py``, the
same file the grader uses), and the grader checks the same property on inputs of its own.
"""

from __future__ import annotations

import inspect

import pytest
import torch
from _gradcheck import (
    NO_OUTPUT,
    STEP,
    agrees,
    along,
    backward,
    directions,
    disagrees,
    inputs_of,
    raised,
    shifted,
    weighted,
)

SEED = 0  # the weighting of the outputs; the directions use SEED + 1


def check_autograd(qualname: str, fn, args: tuple, kwargs: dict, wrt: tuple[str, ...], *, case: str):
    """Backpropagate through ``fn(*args, **kwargs)`` with respect to the arguments named in
    ``wrt`` (tensors or dicts of tensors, float64) and compare the gradient with central
    differences of ``fn``'s own values along random directions."""
    __tracebackhide__ = True
    bound = inspect.signature(fn).bind(*args, **kwargs)
    arguments = dict(bound.arguments)
    base = {key: t.detach() for key, t in inputs_of(arguments, wrt).items()}

    def call(values, grad):
        with torch.set_grad_enabled(grad):
            try:
                return fn(**shifted(arguments, wrt, values))
            except NotImplementedError:
                pytest.fail(f"{qualname}: not implemented yet", pytrace=False)

    inputs = {key: t.clone().requires_grad_(True) for key, t in base.items()}
    value = call(inputs, True)
    try:
        grads = backward(value, inputs, SEED)
    except ValueError:
        pytest.fail(raised(qualname, case, NO_OUTPUT), pytrace=False)
    except RuntimeError as error:
        pytest.fail(raised(qualname, case, str(error)), pytrace=False)
    for d, direction in enumerate(directions(base, SEED + 1)):
        analytic = along(grads, direction)
        plus = {key: t + STEP * direction[key] for key, t in base.items()}
        minus = {key: t - STEP * direction[key] for key, t in base.items()}
        numeric = (weighted(call(plus, False), SEED) - weighted(call(minus, False), SEED)) / (2 * STEP)
        if not agrees(analytic, numeric):
            pytest.fail(disagrees(qualname, case, d, analytic, numeric), pytrace=False)
