# function: optimizers.adam
# mistake: the step counter is incremented first and the bias correction then uses t + 1
#   (a 0-based formula applied to a 1-based counter), so step 1 is corrected by 1 - beta^2
# class: off-by-one (step count)
# confirmed: max |diff| 0.047 in w vs torch.optim.Adam(lr=0.1) over 3 steps, m and v right
#   (w=randn(5,3))
import torch


def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    beta1, beta2 = betas
    t = state.get("step", 0) + 1
    m = beta1 * state.get("m", torch.zeros_like(w)) + (1 - beta1) * dw
    v = beta2 * state.get("v", torch.zeros_like(w)) + (1 - beta2) * dw * dw
    m_hat = m / (1 - beta1 ** (t + 1))
    v_hat = v / (1 - beta2 ** (t + 1))
    w_next = w - lr * m_hat / (torch.sqrt(v_hat) + eps)
    return w_next, {"step": t, "m": m, "v": v}
