# function: rnn.truncated_bptt
# mistake: every chunk starts again from h0 instead of from the last hidden state of the chunk
#   before it (the state is reset at each cut, not only the gradient)
# class: state bookkeeping
# confirmed: max |diff| 3.12 (loss, grads, h_last) vs autograd with h.detach() at each cut, B=3,
#   T=7, chunk=3; agrees when chunk >= T
def truncated_bptt(x, targets, h0, params, chunk):
    B, T, D = x.shape
    total_loss = 0.0
    grads = {k: torch.zeros_like(params[k]) for k in ("W_xh", "W_hh", "b_h", "W_hy", "b_y")}
    grad_h0 = None
    h_last = h0
    for start in range(0, T, chunk):
        end = min(start + chunk, T)
        loss_c, g = rnn_bptt(x[:, start:end], targets[:, start:end], h0, params)
        total_loss = total_loss + loss_c
        for k in grads:
            grads[k] = grads[k] + g[k]
        if grad_h0 is None:
            grad_h0 = g["h0"]
        hs = rnn_forward(x[:, start:end], h0, params["W_xh"], params["W_hh"], params["b_h"])
        h_last = hs[:, -1]
    grads["h0"] = grad_h0
    return total_loss, grads, h_last
