# function: rnn.truncated_bptt
# mistake: every chunk starts again from h0 instead of from the last state of the previous
#   chunk: the gradient must stop at a cut, the hidden state must not
# class: state bookkeeping
# confirmed: vs autograd with h.detach() at each cut, B=3,T=5,chunk=2, float64: loss off by
#   1.3, h_last by 1.2, W_xh grad by 2.2 (chunk >= T agrees)
import torch
def truncated_bptt(x, targets, h0, params, chunk):
    T = x.shape[1]
    loss = None
    grads = None
    h_last = h0
    for s in range(0, T, chunk):
        e = min(s + chunk, T)
        l, g = rnn_bptt(x[:, s:e], targets[:, s:e], h0, params)
        if grads is None:
            loss, grads = l, dict(g)
        else:
            loss = loss + l
            for k in ("W_xh", "W_hh", "b_h", "W_hy", "b_y"):
                grads[k] = grads[k] + g[k]
        h_last = rnn_forward(x[:, s:e], h0, params["W_xh"], params["W_hh"], params["b_h"])[:, -1]
    return loss, grads, h_last
