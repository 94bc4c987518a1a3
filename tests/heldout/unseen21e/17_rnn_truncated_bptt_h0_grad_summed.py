# function: rnn.truncated_bptt
# mistake: the "h0" gradient is summed over all chunks like the parameter gradients; only the
#   first chunk starts from h0, the later chunks' start states are detached copies
# class: state bookkeeping
# confirmed: vs autograd with h.detach() at each cut, B=3,T=5,chunk=2, float64: loss, h_last
#   and parameter gradients agree (4e-15), grads['h0'] off by up to 0.61
import torch
def truncated_bptt(x, targets, h0, params, chunk):
    T = x.shape[1]
    h = h0
    loss = None
    grads = None
    for s in range(0, T, chunk):
        e = min(s + chunk, T)
        l, g = rnn_bptt(x[:, s:e], targets[:, s:e], h, params)
        if grads is None:
            loss, grads = l, dict(g)
        else:
            loss = loss + l
            for k in grads:
                grads[k] = grads[k] + g[k]
        h = rnn_forward(x[:, s:e], h, params["W_xh"], params["W_hh"], params["b_h"])[:, -1]
    return loss, grads, h
