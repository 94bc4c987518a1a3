# function: optimizers.adam
# mistake: only the first moment is bias-corrected; the second moment v is used without
#   dividing by (1 - beta2^t), so early steps are far too large
# class: missing term
# confirmed: 5 steps vs torch.optim.Adam(lr=0.05), w=randn(3,4), float64: weights max |diff|
#   4.67
import torch
def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    beta1, beta2 = betas
    t = state.get("step", 0) + 1
    m = beta1 * state.get("m", torch.zeros_like(w)) + (1 - beta1) * dw
    v = beta2 * state.get("v", torch.zeros_like(w)) + (1 - beta2) * dw * dw
    m_hat = m / (1 - beta1 ** t)
    w_next = w - lr * m_hat / (torch.sqrt(v) + eps)
    return w_next, {"step": t, "m": m, "v": v}
