"""Known-wrong and alternative-correct optimizers (see tests/mutants/__init__.py)."""

from tests.mutants import Alternative, FromTable, Mutant

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
        "optimizers.adam",
        "bias corrections (1 - beta)**t",
        """
def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    b1, b2 = betas
    t = state.get("step", 0) + 1
    m = b1 * state.get("m", torch.zeros_like(w)) + (1 - b1) * dw
    v = b2 * state.get("v", torch.zeros_like(w)) + (1 - b2) * dw * dw
    m_hat, v_hat = m / (1 - b1) ** t, v / (1 - b2) ** t
    return w - lr * m_hat / (torch.sqrt(v_hat) + eps), {"step": t, "m": m, "v": v}
""",
        hint="every bias correction is written wrongly: (1 - betas[0])**t where 1 - betas[0]**t belongs",
    ),
    Mutant(
        "optimizers.adam",
        "first moment's correction (1 - beta1)**t",
        """
def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    b1, b2 = betas
    t = state.get("step", 0) + 1
    m = b1 * state.get("m", torch.zeros_like(w)) + (1 - b1) * dw
    v = b2 * state.get("v", torch.zeros_like(w)) + (1 - b2) * dw * dw
    m_hat = m / (1 - b1) ** t
    return w - lr * m_hat / (torch.sqrt(v / (1 - b2**t)) + eps), {"step": t, "m": m, "v": v}
""",
        hint="the bias correction in m_hat is (1 - betas[0])**t",
    ),
    FromTable("optimizers.rmsprop", "eps inside the square root", "eps inside the square root"),
    FromTable("optimizers.sgd_momentum", "dampened momentum", "dampened momentum", form="momentum_dampened"),
    FromTable("optimizers.adagrad", "forgets to accumulate", "no accumulation"),
    FromTable(
        "optimizers.clip_grad_norm", "clips each tensor by its own norm", "each gradient clipped by its own norm"
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
        "bias corrections as factors computed once",
        """
def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    b1, b2 = betas
    if state:
        n, m_old, v_old = state["step"] + 1, state["m"], state["v"]
    else:
        n, m_old, v_old = 1, torch.zeros_like(w), torch.zeros_like(w)
    m_new = m_old.mul(b1).add(dw, alpha=1.0 - b1)
    v_new = v_old.mul(b2).addcmul(dw, dw, value=1.0 - b2)
    c1, c2 = 1.0 / (1.0 - b1**n), 1.0 / (1.0 - b2**n)
    update = (m_new * c1) / (torch.sqrt(v_new * c2) + eps)
    return w.sub(update, alpha=lr), dict(m=m_new, v=v_new, step=n)
""",
    ),
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
