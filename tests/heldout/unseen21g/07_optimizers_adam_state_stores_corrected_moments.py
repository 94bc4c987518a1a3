# function: optimizers.adam
# mistake: the bias-corrected m_hat and v_hat overwrite m and v and are stored in the state, so
#   the next step averages corrected moments (the correction compounds from step 2 on)
# class: wrong state stored
# confirmed: vs torch.optim.Adam(lr=0.1): step 1 w right but m, v off by 2.28; after 3 steps w
#   off by 0.15 and v by 3.8e5 (w=randn(5,3))
import torch


def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    b1, b2 = betas
    if not state:
        state = {"step": 0, "m": torch.zeros_like(w), "v": torch.zeros_like(w)}
    t = state["step"] + 1
    m = b1 * state["m"] + (1 - b1) * dw
    v = b2 * state["v"] + (1 - b2) * dw ** 2
    m = m / (1 - b1 ** t)
    v = v / (1 - b2 ** t)
    w_next = w - lr * m / (v.sqrt() + eps)
    return w_next, {"step": t, "m": m, "v": v}
