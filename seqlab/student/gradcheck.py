"""The autograd property, one rule for both sides: gradients flow through a contract function.

The recall, reverser and selective-copy labs train with autograd *through the student's own
functions*. A function can give the right values and still break there: a write into a tensor
autograd saved for the backward pass ("modified by an inplace operation"), a ``.detach()``,
``.data``, ``.item()`` or ``torch.no_grad()`` on the way. The check backpropagates a random
weighting of the function's outputs to its floating-point inputs and compares the gradient, along
random directions, with central differences of the function's *own* values: a correct function
passes whatever its values, so a wrong value is never charged here a second time.

Self-contained (torch only). The grader's student process computes the backward pass with it,
the grader judges with it, and the student's public tests carry the same file (their
``_gradcheck.py``), so both sides give the same verdict in the same words.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

# Central differences in float64 with a step of 1e-6: the truncation error is ~1e-12 times the
# third derivative and the rounding ~1e-10 of the summed output's size, so 1e-6 relative (to the
# two derivatives' sizes) plus 1e-7 passes every correct gradient, where a gradient missing a
# term (a path cut by .detach(), say) is off by a share of the whole.
STEP, RTOL, ATOL = 1e-6, 1e-6, 1e-7
DIRECTIONS = 3  # random directions checked (each costs two more calls of the function)

# Who trains through each function: the reason the property is part of its contract.
LABS = {
    "rnn.softmax_cross_entropy": "the recall, reverser and selective-copy labs train through it",
    "lstm_gru.gru_cell": "the recall lab trains through it",
    "lstm_gru.gru_forward": "the recall lab trains through it",
    "attention.scaled_dot_product_attention": "the reverser lab trains through it",
    "attention.multi_head_attention": "the reverser lab trains through it",
    "positional.embed_tokens": "the reverser lab trains through it",
    "transformer.layer_norm": "the reverser lab trains through it",
    "transformer.feed_forward": "the reverser lab trains through it",
    "transformer.encoder_block": "the reverser lab trains through it",
    "transformer.decoder_block": "the reverser lab trains through it",
    "selective_scan.discretize": "the selective-copy lab trains through it",
    "selective_scan.linear_scan": "the selective-copy lab trains through it, inside your selective_scan,",
    "selective_scan.selective_scan": "the selective-copy lab trains through it",
}


def leaves(tree: Any, path: str = "") -> Iterator[tuple[str, torch.Tensor]]:
    """(path, tensor) of every floating-point tensor in a tensor or a (nested) container of them."""
    if isinstance(tree, torch.Tensor):
        if tree.is_floating_point():
            yield path, tree
    elif isinstance(tree, dict):
        for name, item in tree.items():
            yield from leaves(item, f"{path}[{name!r}]")
    elif isinstance(tree, (list, tuple)):
        for i, item in enumerate(tree):
            yield from leaves(item, f"{path}[{i}]")


def rebuild(tree: Any, new: dict[str, torch.Tensor], path: str = "") -> Any:
    """``tree`` with each floating-point tensor at a path of ``new`` replaced by ``new[path]``."""
    if isinstance(tree, torch.Tensor):
        return new.get(path, tree) if tree.is_floating_point() else tree
    if isinstance(tree, dict):
        return {name: rebuild(item, new, f"{path}[{name!r}]") for name, item in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(rebuild(item, new, f"{path}[{i}]") for i, item in enumerate(tree))
    return tree


def inputs_of(arguments: dict[str, Any], wrt: tuple[str, ...]) -> dict[str, torch.Tensor]:
    """``{"name[path]": tensor}``: the floating-point tensors of the arguments named in ``wrt``."""
    return {f"{name}{path}": t for name in wrt for path, t in leaves(arguments[name])}


def shifted(arguments: dict[str, Any], wrt: tuple[str, ...], values: dict[str, torch.Tensor]) -> dict[str, Any]:
    """The arguments with the tensors of ``inputs_of`` replaced by ``values`` (same keys)."""
    new = dict(arguments)
    for name in wrt:
        new[name] = rebuild(arguments[name], {path: values[f"{name}{path}"] for path, _ in leaves(arguments[name])})
    return new


def cotangents(outputs: list[torch.Tensor], seed: int) -> list[torch.Tensor]:
    """The random weighting of the outputs whose sum is backpropagated (drawn in float64)."""
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(t.shape, generator=gen, dtype=torch.float64).to(t.dtype) for t in outputs]


def weighted(value: Any, seed: int) -> float:
    """The backpropagated scalar, sum(output * cotangent), of a returned value, as a float."""
    outputs = [t.detach() for _, t in leaves(value)]
    return float(sum((t * w).sum() for t, w in zip(outputs, cotangents(outputs, seed))))


def backward(value: Any, inputs: dict[str, torch.Tensor], seed: int) -> dict[str, torch.Tensor]:
    """The gradient of ``weighted(value, seed)`` with respect to ``inputs`` (zeros where the
    output does not depend on one). Raises RuntimeError as autograd does; ValueError when the
    value holds no floating-point tensor."""
    outputs = [t for _, t in leaves(value)]
    if not outputs:
        raise ValueError(NO_OUTPUT)
    loss = torch.stack([(t * w).sum().to(torch.float64) for t, w in zip(outputs, cotangents(outputs, seed))]).sum()
    grads = torch.autograd.grad(loss, list(inputs.values()), allow_unused=True)
    return {key: torch.zeros_like(t) if g is None else g for (key, t), g in zip(inputs.items(), grads)}


def directions(inputs: dict[str, torch.Tensor], seed: int) -> list[dict[str, torch.Tensor]]:
    """``DIRECTIONS`` random directions in the space of ``inputs``."""
    gen = torch.Generator().manual_seed(seed)
    return [
        {key: torch.randn(t.shape, generator=gen, dtype=torch.float64).to(t.dtype) for key, t in inputs.items()}
        for _ in range(DIRECTIONS)
    ]


def along(grads: dict[str, torch.Tensor], direction: dict[str, torch.Tensor]) -> float:
    """The directional derivative autograd gives: sum(grad * direction)."""
    return float(sum((grads[key].to(torch.float64) * d.to(torch.float64)).sum() for key, d in direction.items()))


def agrees(analytic: float, numeric: float) -> bool:
    return abs(analytic - numeric) <= ATOL + RTOL * (abs(numeric) + abs(analytic))


# --- the words both sides use -------------------------------------------------------------------

NO_OUTPUT = "it returned no floating-point tensor"


def prefix(qualname: str, case: str) -> str:
    labs = LABS.get(qualname, "a lab trains through it")
    return f"{qualname}, case {case}: {qualname} must support autograd ({labs} with autograd)"


def why(text: str) -> str:
    if "inplace operation" in text or "modified in place" in text:
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


def raised(qualname: str, case: str, error: str) -> str:
    """The verdict when backpropagating raised ``error`` (its first line is shown)."""
    if error == NO_OUTPUT:
        return f"{prefix(qualname, case)}: {NO_OUTPUT}"
    first = error.strip().splitlines()[0] if error.strip() else error
    return f"{prefix(qualname, case)}: computing gradients through it raised RuntimeError: {first}\n{why(error)}"


def disagrees(qualname: str, case: str, d: int, analytic: float, numeric: float) -> str:
    """The verdict when the gradient disagrees with the function's own values along direction ``d``."""
    return (
        f"{prefix(qualname, case)}: its gradient disagrees with finite differences of its own values along a "
        f"random direction ({d + 1} of {DIRECTIONS}): autograd gives {analytic:.10g}, the values change at "
        f"{numeric:.10g} (the backward pass does not match the forward: a .detach() or a value "
        "computed outside the graph on the way?)"
    )
