# function: optimizers.adam
# mistake: the bias-corrected moments m_hat and v_hat are stored in the state and fed back into
#   the next step's moving averages, instead of the raw moments m and v
# class: wrong quantity fed back
# confirmed: step 1 agrees; w off by 0.006 after step 2 and 0.023 after 4 steps vs
#   torch.optim.Adam(lr=0.01, betas=(0.8, 0.99)) on w=randn(3,4); state m wrong from the first
#   call
import torch


def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    b1, b2 = betas
    if not state:
        state = {"step": 0, "m": torch.zeros_like(w), "v": torch.zeros_like(w)}
    t = state["step"] + 1
    m = b1 * state["m"] + (1 - b1) * dw
    v = b2 * state["v"] + (1 - b2) * dw * dw
    m = m / (1 - b1 ** t)
    v = v / (1 - b2 ** t)
    w_next = w - lr * m / (v.sqrt() + eps)
    return w_next, {"step": t, "m": m, "v": v}
