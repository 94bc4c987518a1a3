# function: rnn.truncated_bptt
# mistake: every chunk starts again from h0 instead of the last state of the previous chunk
#   (the state is cut along with the gradient), so loss, gradients and h_last are wrong
# class: wrong state handling
# confirmed: vs autograd with h detached at each cut, T=7 chunk=3: loss off by 0.050, h_last
#   1.02, W_xh grad 1.13 (h0 grad right)
import torch


def truncated_bptt(x, targets, h0, params, chunk):
    keys = ["W_xh", "W_hh", "b_h", "W_hy", "b_y"]
    T = x.shape[1]
    loss = 0.0
    grads = {k: torch.zeros_like(params[k]) for k in keys}
    h_last = h0
    for start in range(0, T, chunk):
        xc = x[:, start:start + chunk]
        yc = targets[:, start:start + chunk]
        l, g = rnn_bptt(xc, yc, h0, params)
        loss = loss + l
        for k in keys:
            grads[k] = grads[k] + g[k]
        if start == 0:
            grads["h0"] = g["h0"]
        h_last = rnn_forward(xc, h0, params["W_xh"], params["W_hh"], params["b_h"])[:, -1]
    return loss, grads, h_last
