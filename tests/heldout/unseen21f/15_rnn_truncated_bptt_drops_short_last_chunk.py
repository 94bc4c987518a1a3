# function: rnn.truncated_bptt
# mistake: the loop only visits full chunks, so when chunk does not divide T the shorter last
#   chunk is skipped: its loss and gradients are missing and h_last is too early
# class: off by one
# confirmed: T=7, chunk=3: loss, grads and h_last miss steps 6..7, max |diff| 1.94 vs autograd
#   with h.detach() at each cut; agrees when chunk divides T
def truncated_bptt(x, targets, h0, params, chunk):
    T = x.shape[1]
    n_chunks = T // chunk
    if n_chunks == 0:
        n_chunks = 1
    h = h0
    loss = 0.0
    grads = None
    for c in range(n_chunks):
        s, e = c * chunk, min((c + 1) * chunk, T)
        l, g = rnn_bptt(x[:, s:e], targets[:, s:e], h, params)
        loss = loss + l
        if grads is None:
            grads = dict(g)
        else:
            for k in ("W_xh", "W_hh", "b_h", "W_hy", "b_y"):
                grads[k] = grads[k] + g[k]
        h = rnn_forward(x[:, s:e], h, params["W_xh"], params["W_hh"], params["b_h"])[:, -1]
    return loss, grads, h
