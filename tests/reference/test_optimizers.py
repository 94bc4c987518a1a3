"""Reference optimizers against torch.optim, step after step, and clip_grad_norm against
torch.nn.utils.clip_grad_norm_; plus purity (nothing modified, nothing aliased, dtype/device kept).
"""

from __future__ import annotations

import pytest
import torch

from solutions import optimizers
from tests._helpers import assert_close

STEPS = 6
SHAPES = [(), (1,), (7,), (3, 4), (1, 5, 2)]

# name -> (torch.optim class, contract defaults, {our state key: torch state key})
RULES = {
    "sgd": (torch.optim.SGD, dict(lr=1e-2), {}),
    "sgd_momentum": (torch.optim.SGD, dict(lr=1e-2, momentum=0.9), {"velocity": "momentum_buffer"}),
    "adagrad": (torch.optim.Adagrad, dict(lr=1e-2, eps=1e-10), {"sum_sq": "sum"}),
    "rmsprop": (torch.optim.RMSprop, dict(lr=1e-2, alpha=0.99, eps=1e-8), {"sq_avg": "square_avg"}),
    "adam": (
        torch.optim.Adam,
        dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8),
        {"step": "step", "m": "exp_avg", "v": "exp_avg_sq"},
    ),
}
# every hyperparameter changed from its default, eps included
NON_DEFAULT = {
    "sgd": dict(lr=0.3),
    "sgd_momentum": dict(lr=0.05, momentum=0.5),
    "adagrad": dict(lr=0.2, eps=1e-3),
    "rmsprop": dict(lr=3e-3, alpha=0.9, eps=1e-4),
    "adam": dict(lr=0.02, betas=(0.8, 0.95), eps=1e-4),
}
CASES = [(name, {}) for name in RULES] + list(NON_DEFAULT.items())
CASE_IDS = [f"{name}-{'default' if not kw else 'custom'}" for name, kw in CASES]


def _randn(shape, gen, device, dtype):
    return torch.randn(shape, generator=gen, dtype=torch.float64).to(device=device, dtype=dtype)


def _same_memory(a, b):
    """True when ``a`` and ``b`` share storage (the same tensor or views of one another)."""
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def _clone_state(state):
    return {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in state.items()}


def _assert_state_equal(state, snapshot):
    assert state.keys() == snapshot.keys()
    for k, v in snapshot.items():
        if isinstance(v, torch.Tensor):
            assert torch.equal(state[k], v), f"state[{k!r}] was modified in place"
        else:
            assert state[k] == v


@pytest.mark.parametrize("name,kwargs", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_matches_torch_optim_step_after_step(name, kwargs, shape, device, dtype, gen):
    rule = getattr(optimizers, name)
    optim_cls, defaults, state_map = RULES[name]
    w0 = _randn(shape, gen, device, dtype)
    grads = [_randn(shape, gen, device, dtype) for _ in range(STEPS)]

    p = w0.clone().requires_grad_(True)
    opt = optim_cls([p], **{**defaults, **kwargs})  # lr always given explicitly
    w, state = w0.clone(), {}
    for k, dw in enumerate(grads):
        p.grad = dw.clone()
        opt.step()
        w, state = rule(w, dw, state, **kwargs)
        assert_close(w, p.detach(), dtype, msg=lambda m: f"step {k + 1}: {m}")
        assert set(state) == set(state_map)
        for ours, theirs in state_map.items():
            ref = opt.state[p][theirs]
            if ours == "step":
                assert type(state["step"]) is int and state["step"] == int(ref) == k + 1
            else:
                assert_close(state[ours], ref, dtype)


@pytest.mark.parametrize("name,kwargs", CASES, ids=CASE_IDS)
def test_pure_and_preserves_dtype_device(name, kwargs, device, dtype, gen):
    rule = getattr(optimizers, name)
    w, state = _randn((3, 4), gen, device, dtype), {}
    for _ in range(3):  # the later calls see a non-empty state
        dw = _randn((3, 4), gen, device, dtype)
        w_snap, dw_snap, state_snap = w.clone(), dw.clone(), _clone_state(state)
        w_next, state_next = rule(w, dw, state, **kwargs)

        assert torch.equal(w, w_snap) and torch.equal(dw, dw_snap)
        _assert_state_equal(state, state_snap)
        assert state_next is not state
        assert w_next.dtype == dtype and w_next.device == w.device and w_next.shape == w.shape
        assert not _same_memory(w_next, w) and not _same_memory(w_next, dw)
        for key, value in state_next.items():
            if key == "step":
                assert type(value) is int
                continue
            assert value.dtype == dtype and value.device == w.device and value.shape == w.shape
            assert not any(_same_memory(value, t) for t in (w, dw, w_next))
            old = [t for t in state.values() if isinstance(t, torch.Tensor)]
            assert not any(_same_memory(value, t) for t in old)
        w, state = w_next, state_next


def test_first_momentum_velocity_is_the_gradient(gen):
    dw = torch.randn(5, generator=gen, dtype=torch.float64)
    _, state = optimizers.sgd_momentum(torch.zeros(5, dtype=torch.float64), dw, {}, momentum=0.7)
    assert torch.equal(state["velocity"], dw)


def _torch_clip(grads, max_norm):
    params = [torch.zeros_like(g, requires_grad=True) for g in grads]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    total = torch.nn.utils.clip_grad_norm_(params, max_norm)
    return [p.grad for p in params], total


CLIP_SHAPES = [[(4,)], [(1,)], [(3, 5), (7,), (2, 2, 2)], [(), (1, 1)]]


@pytest.mark.parametrize("shapes", CLIP_SHAPES, ids=str)
@pytest.mark.parametrize("factor", [0.3, 1.0, 2.5], ids=["clipped", "at-norm", "unclipped"])
def test_clip_grad_norm_matches_torch(shapes, factor, device, dtype, gen):
    grads = [_randn(s, gen, device, dtype) for s in shapes]
    snaps = [g.clone() for g in grads]
    norm = torch.sqrt(sum((g.double() ** 2).sum() for g in grads)).item()
    max_norm = factor * norm

    clipped, total = optimizers.clip_grad_norm(grads, max_norm)
    ref_clipped, ref_total = _torch_clip(grads, max_norm)

    assert total.dim() == 0 and total.dtype == dtype and total.device == grads[0].device
    assert_close(total, ref_total, dtype)
    assert len(clipped) == len(grads)
    for c, r, g, s in zip(clipped, ref_clipped, grads, snaps):
        assert_close(c, r, dtype)
        assert c.dtype == dtype and c.device == g.device and c.shape == g.shape
        assert not _same_memory(c, g)
        assert torch.equal(g, s)
    # the contract's formula: at max_norm == norm the 1e-6 still shrinks a little; above it the
    # coefficient is clamped at 1 (never amplified)
    new_norm = torch.sqrt(sum((c.double() ** 2).sum() for c in clipped)).item()
    assert new_norm == pytest.approx(norm * min(1.0, max_norm / (norm + 1e-6)), rel=1e-6)
    if factor > 1:
        assert new_norm == pytest.approx(norm, rel=1e-6)


def test_clip_grad_norm_known_value():
    clipped, total = optimizers.clip_grad_norm([torch.tensor([3.0]), torch.tensor([[4.0]])], 1.0)
    assert total.item() == pytest.approx(5.0)
    assert clipped[0].item() == pytest.approx(0.6, rel=1e-5)
    assert clipped[1].item() == pytest.approx(0.8, rel=1e-5)
