# function: rnn.rnn_bptt
# mistake: the gradient is sent back through time as dL/da_{t+1} @ W_hh.T (the forward's
#   orientation) instead of dL/da_{t+1} @ W_hh; W_hh is square, so it runs, and every gradient
#   except W_hy and b_y is wrong, h0's included
# class: transpose slip in the backward pass
# confirmed: loss, W_hy and b_y grads right; vs autograd W_xh grad off by 0.71, W_hh 0.58, b_h
#   0.53, h0 0.26 (B=3 T=5 D=4 H=6 C=7)
import torch
import torch.nn.functional as F


def rnn_bptt(x, targets, h0, params):
    B, T, D = x.shape
    hs = rnn_forward(x, h0, params["W_xh"], params["W_hh"], params["b_h"])
    o = hs @ params["W_hy"].T + params["b_y"]
    C = o.shape[-1]
    loss = softmax_cross_entropy(o.reshape(-1, C), targets.reshape(-1)) * T
    do = (torch.softmax(o, -1) - F.one_hot(targets, C).to(o.dtype)) / B
    h_prev_all = torch.cat([h0.unsqueeze(1), hs[:, :-1]], dim=1)
    das = [None] * T
    carry = torch.zeros_like(h0)
    for t in range(T - 1, -1, -1):
        dh = do[:, t] @ params["W_hy"] + carry
        das[t] = dh * (1 - hs[:, t] ** 2)
        carry = das[t] @ params["W_hh"].T
    da = torch.stack(das, dim=1)
    grads = {
        "W_xh": torch.einsum("bth,btd->hd", da, x),
        "W_hh": torch.einsum("bth,btk->hk", da, h_prev_all),
        "b_h": da.sum(dim=(0, 1)),
        "W_hy": torch.einsum("btc,bth->ch", do, hs),
        "b_y": do.sum(dim=(0, 1)),
        "h0": carry,
    }
    return loss, grads
