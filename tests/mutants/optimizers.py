"""Known-wrong and alternative-correct optimizers (see tests/mutants/__init__.py)."""

from tests.mutants import Alternative, Mutant

MUTANTS = [
    Mutant(
        "optimizers.adam",
        "modifies the state in place",
        """
def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    b1, b2 = betas
    t = state.get("step", 0) + 1
    m = state["m"].mul_(b1).add_((1 - b1) * dw) if "m" in state else (1 - b1) * dw
    v = state["v"].mul_(b2).add_((1 - b2) * dw * dw) if "v" in state else (1 - b2) * dw * dw
    m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
    return w - lr * m_hat / (torch.sqrt(v_hat) + eps), {"step": t, "m": m, "v": v}
""",
    ),
    Mutant(
        "optimizers.rmsprop",
        "eps inside the square root",
        """
def rmsprop(w, dw, state, lr=1e-2, alpha=0.99, eps=1e-8):
    s = alpha * state.get("sq_avg", torch.zeros_like(w)) + (1 - alpha) * dw * dw
    return w - lr * dw / torch.sqrt(s + eps), {"sq_avg": s}
""",
        hint="eps",
    ),
    Mutant(
        "optimizers.sgd_momentum",
        "dampened momentum",
        """
def sgd_momentum(w, dw, state, lr=1e-2, momentum=0.9):
    v = momentum * state.get("velocity", torch.zeros_like(w)) + (1 - momentum) * dw
    return w - lr * v, {"velocity": v}
""",
        hint="dampened",
    ),
    Mutant(
        "optimizers.adagrad",
        "forgets to accumulate",
        """
def adagrad(w, dw, state, lr=1e-2, eps=1e-10):
    G = dw * dw
    return w - lr * dw / (torch.sqrt(G) + eps), {"sum_sq": G}
""",
        hint="accumulation",
    ),
    Mutant(
        "optimizers.clip_grad_norm",
        "clips each tensor by its own norm",
        """
def clip_grad_norm(grads, max_norm):
    total = torch.linalg.vector_norm(torch.stack([g.norm() for g in grads]))
    return [g * torch.clamp(max_norm / (g.norm() + 1e-6), max=1.0) for g in grads], total
""",
        hint="own norm",
    ),
    Mutant(
        "optimizers.clip_grad_norm",
        "uses torch.nn.utils.clip_grad_norm_ (forbidden)",
        """
def clip_grad_norm(grads, max_norm):
    grads = [g.clone() for g in grads]
    params = [torch.nn.Parameter(torch.zeros_like(g)) for g in grads]
    for p, g in zip(params, grads):
        p.grad = g
    total = torch.nn.utils.clip_grad_norm_(params, max_norm)
    return [p.grad.detach().clone() for p in params], total.detach()
""",
    ),
]

ALTERNATIVES = [
    Alternative(
        "optimizers.adam",
        "bias correction folded into the step size",
        """
def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    beta1, beta2 = betas
    step = int(state.get("step", 0)) + 1
    m = torch.lerp(state.get("m", torch.zeros_like(w)), dw, 1 - beta1)
    v = beta2 * state.get("v", torch.zeros_like(w)) + (1 - beta2) * dw.square()
    bc1, bc2 = 1 - beta1 ** step, 1 - beta2 ** step
    denom = v.sqrt() / bc2 ** 0.5 + eps
    return w - (lr / bc1) * m / denom, {"m": m, "v": v, "step": step}
""",
    ),
    Alternative(
        "optimizers.clip_grad_norm",
        "flatten-and-concatenate norm",
        """
def clip_grad_norm(grads, max_norm):
    flat = torch.cat([g.reshape(-1) for g in grads])
    total_norm = torch.sqrt((flat * flat).sum())
    scale = min(1.0, max_norm / (float(total_norm) + 1e-6))
    return [g * scale for g in grads], total_norm
""",
    ),
]
