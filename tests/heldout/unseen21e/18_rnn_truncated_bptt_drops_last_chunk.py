# function: rnn.truncated_bptt
# mistake: the loop runs over T // chunk full chunks only, so when chunk does not divide T the
#   last, shorter chunk is left out of the loss, the gradients and the final state
# class: shape case (off by one in the chunk count)
# confirmed: vs autograd with h.detach() at each cut, B=3,T=5,chunk=2, float64: loss off by
#   2.9, h_last by 1.8, W_xh grad by 1.1; with chunk=5 (divides T) everything agrees
import torch
def truncated_bptt(x, targets, h0, params, chunk):
    T = x.shape[1]
    n_chunks = max(T // chunk, 1)
    h = h0
    loss = None
    grads = None
    for c in range(n_chunks):
        s = c * chunk
        e = min(s + chunk, T)
        l, g = rnn_bptt(x[:, s:e], targets[:, s:e], h, params)
        if grads is None:
            loss, grads = l, dict(g)
        else:
            loss = loss + l
            for k in ("W_xh", "W_hh", "b_h", "W_hy", "b_y"):
                grads[k] = grads[k] + g[k]
        h = rnn_forward(x[:, s:e], h, params["W_xh"], params["W_hh"], params["b_h"])[:, -1]
    return loss, grads, h
