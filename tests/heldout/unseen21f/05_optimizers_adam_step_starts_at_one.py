# function: optimizers.adam
# mistake: the step counter defaults to 1 before it is incremented, so the first call already
#   uses t = 2 in the bias correction (and every later step is one ahead)
# class: off by one
# confirmed: max |diff| 0.0038 in w after 4 steps vs torch.optim.Adam(lr=0.01, betas=(0.8, 0.99))
#   on w=randn(3,4); state['step'] is 2 after the first call
import torch


def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    beta1, beta2 = betas
    t = state.get("step", 1) + 1
    m = state.get("m", torch.zeros_like(w))
    v = state.get("v", torch.zeros_like(w))
    m = beta1 * m + (1 - beta1) * dw
    v = beta2 * v + (1 - beta2) * dw * dw
    m_hat = m / (1 - beta1 ** t)
    v_hat = v / (1 - beta2 ** t)
    w_next = w - lr * m_hat / (torch.sqrt(v_hat) + eps)
    return w_next, {"step": t, "m": m, "v": v}
