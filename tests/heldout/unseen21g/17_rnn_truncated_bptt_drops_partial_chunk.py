# function: rnn.truncated_bptt
# mistake: the number of chunks is T // chunk (at least one), so when chunk does not divide T the
#   last, shorter chunk is silently dropped from the loss, the gradients and h_last
# class: off-by-one (chunking, subtle)
# confirmed: matches autograd with h detached at each cut for T=6, chunk=3 (2e-16); for T=7,
#   chunk=3 loss off by 2.29, h_last 1.73, grads up to 0.64
import torch


def truncated_bptt(x, targets, h0, params, chunk):
    T = x.shape[1]
    n_chunks = max(T // chunk, 1)
    h = h0
    total = None
    grads = None
    for c in range(n_chunks):
        xs = x[:, c * chunk:(c + 1) * chunk]
        ys = targets[:, c * chunk:(c + 1) * chunk]
        loss_c, g = rnn_bptt(xs, ys, h, params)
        if grads is None:
            total, grads = loss_c, dict(g)
        else:
            total = total + loss_c
            for k in ("W_xh", "W_hh", "b_h", "W_hy", "b_y"):
                grads[k] = grads[k] + g[k]
        h = rnn_forward(xs, h, params["W_xh"], params["W_hh"], params["b_h"])[:, -1]
    return total, grads, h
