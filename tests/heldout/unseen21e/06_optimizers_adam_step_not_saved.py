# function: optimizers.adam
# mistake: the incremented step counter is used for this step's bias correction but the old
#   value is written back into the state, so every step is corrected as if it were step 1
# class: state bookkeeping
# confirmed: 5 steps vs torch.optim.Adam(lr=0.05), w=randn(3,4), float64: state step 0 vs 5,
#   weights max |diff| 0.104 (step 1 alone agrees)
import torch
def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    beta1, beta2 = betas
    step = state.get("step", 0)
    t = step + 1
    m = beta1 * state.get("m", torch.zeros_like(w)) + (1 - beta1) * dw
    v = beta2 * state.get("v", torch.zeros_like(w)) + (1 - beta2) * dw * dw
    m_hat = m / (1 - beta1 ** t)
    v_hat = v / (1 - beta2 ** t)
    w_next = w - lr * m_hat / (torch.sqrt(v_hat) + eps)
    return w_next, {"step": step, "m": m, "v": v}
