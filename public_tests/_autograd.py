"""A contract property the labs rely on, tested with the function: gradients flow through it.

The recall, reverser and selective-copy labs train with autograd *through your own functions*
(``softmax_cross_entropy``, the GRU, attention and the Transformer blocks, the selective scan and
its parts). A function can give the right values and still break there: a write into a tensor
autograd saved for the backward pass ("modified by an inplace operation"), a ``.detach()``,
``.data``, ``.item()`` or ``torch.no_grad()`` on the way. ``check_autograd`` backpropagates
through your function on small float64 inputs and checks the gradients against finite
differences of your own function's values, so such a function fails its own test, by name,
before a lab fails for it.
"""

from __future__ import annotations

import pytest
import torch

# Central differences in float64 with a step of 1e-6: the truncation error is ~1e-12 times the
# third derivative and the rounding ~1e-10 of the summed output's size, so 1e-6 relative (to the
# two derivatives' sizes) plus 1e-7 passes every correct gradient, where a gradient missing a
# term (a path cut by .detach(), say) is off by a share of the whole.
STEP, RTOL, ATOL = 1e-6, 1e-6, 1e-7
DIRECTIONS = 3  # random directions checked (each costs two more calls of your function)


def _leaves(tree, path=""):
    """(path, tensor) of every floating-point tensor in a tensor or a (nested) dict of them."""
    if isinstance(tree, torch.Tensor):
        if tree.is_floating_point():
            yield path, tree
    elif isinstance(tree, dict):
        for name, item in tree.items():
            yield from _leaves(item, f"{path}[{name!r}]")
    elif isinstance(tree, (list, tuple)):
        for i, item in enumerate(tree):
            yield from _leaves(item, f"{path}[{i}]")


def _rebuild(tree, new, path=""):
    """``tree`` with each floating-point tensor replaced by ``new[path]``."""
    if isinstance(tree, torch.Tensor):
        return new.get(path, tree) if tree.is_floating_point() else tree
    if isinstance(tree, dict):
        return {name: _rebuild(item, new, f"{path}[{name!r}]") for name, item in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_rebuild(item, new, f"{path}[{i}]") for i, item in enumerate(tree))
    return tree


def _why(error: Exception) -> str:
    text = str(error)
    if "inplace operation" in text:
        return (
            "an in-place write (x[...] = ..., x += ..., an op ending in _) into a tensor autograd saved "
            "for the backward pass. Where an input requires grad (torch.is_grad_enabled() and "
            "x.requires_grad), build new tensors instead of writing into them"
        )
    if "does not require grad" in text or "does not have a grad_fn" in text:
        return (
            "the output is not connected to the inputs' graph: a .detach(), .data, .item(), .numpy(), "
            "torch.no_grad() or a new tensor made from values on the way"
        )
    return "see the error"


def check_autograd(qualname: str, fn, args: tuple, kwargs: dict, wrt: tuple[str, ...], *, case: str, labs: str):
    """Backpropagate through ``fn(*args, **kwargs)`` with respect to the arguments named in
    ``wrt`` (tensors or dicts of tensors, float64) and compare the gradient with central
    differences of ``fn``'s own values along random directions. ``labs``: who trains through it ("the recall lab trains through it")."""
    __tracebackhide__ = True
    import inspect

    bound = inspect.signature(fn).bind(*args, **kwargs)
    inputs = dict(bound.arguments)
    prefix = f"{qualname}, case {case}: {qualname} must support autograd ({labs} with autograd)"
    targets = {f"{name}{path}": t for name in wrt for path, t in _leaves(inputs[name])}
    gen = torch.Generator().manual_seed(0)

    def call(values, grad):
        new = {}
        for name in wrt:
            new_leaves = {path: values[f"{name}{path}"] for path, _ in _leaves(inputs[name])}
            new[name] = _rebuild(inputs[name], new_leaves)
        with torch.set_grad_enabled(grad):
            try:
                return fn(**{**inputs, **new})
            except NotImplementedError:
                pytest.fail(f"{qualname}: not implemented yet", pytrace=False)

    leaves = {key: t.detach().clone().requires_grad_(True) for key, t in targets.items()}
    out = call(leaves, True)
    outputs = [t for _, t in _leaves(out)]
    if not outputs:
        pytest.fail(f"{prefix}: it returned no floating-point tensor", pytrace=False)
    cotangents = [torch.randn(t.shape, generator=gen, dtype=torch.float64).to(t.dtype) for t in outputs]
    try:
        loss = sum((t * w).sum() for t, w in zip(outputs, cotangents))
        grads = torch.autograd.grad(loss, list(leaves.values()), allow_unused=True)
    except RuntimeError as error:
        first = str(error).strip().splitlines()[0]
        pytest.fail(
            f"{prefix}: computing gradients through it raised RuntimeError: {first}\n{_why(error)}", pytrace=False
        )
    # An input the output does not depend on gets no gradient (None): zero, which the finite
    # differences below then confirm, or refute where a path was cut (a .detach() on the way).
    grads = [torch.zeros_like(t) if g is None else g for t, g in zip(leaves.values(), grads)]
    base = {key: t.detach() for key, t in targets.items()}
    for d in range(DIRECTIONS):
        direction = {key: torch.randn(t.shape, generator=gen, dtype=t.dtype) for key, t in base.items()}
        analytic = float(sum((g * direction[key]).sum() for key, g in zip(leaves, grads)))

        def value(sign, direction=direction):
            shifted = {key: t + sign * STEP * direction[key] for key, t in base.items()}
            result = [t.detach() for _, t in _leaves(call(shifted, False))]
            return float(sum((t * w).sum() for t, w in zip(result, cotangents)))

        numeric = (value(1) - value(-1)) / (2 * STEP)
        if not abs(analytic - numeric) <= ATOL + RTOL * (abs(numeric) + abs(analytic)):
            pytest.fail(
                f"{prefix}: its gradient disagrees with finite differences of its own values along a random "
                f"direction ({d + 1} of {DIRECTIONS}): autograd gives {analytic:.10g}, the values change at "
                f"{numeric:.10g} (the backward pass does not match the forward: a .detach() or a value "
                "computed outside the graph on the way?)",
                pytrace=False,
            )
