# function: rnn.rnn_bptt
# mistake: the gradient is sent back through the recurrence with W_hh.T (dL/dh_t gets
#   dL/da_{t+1} @ W_hh.T), as if the forward pass were h @ W_hh; the same for the gradient of h0
# class: transpose/reshape
# confirmed: grads['h0'] off by 0.0997 vs autograd already for T=1 (B=2, D=3, H=4, C=3); for T=4
#   grads['W_xh'], ['W_hh'], ['b_h'] off by up to 2.78 as well
def rnn_bptt(x, targets, h0, params):
    W_xh, W_hh, b_h = params["W_xh"], params["W_hh"], params["b_h"]
    W_hy, b_y = params["W_hy"], params["b_y"]
    B, T, D = x.shape
    hs = rnn_forward(x, h0, W_xh, W_hh, b_h)
    o = hs @ W_hy.T + b_y
    C = o.shape[-1]
    loss = softmax_cross_entropy(o.reshape(-1, C), targets.reshape(-1)) * T

    p = torch.softmax(o, dim=-1)
    do = p.clone()
    do = do - F.one_hot(targets, C).to(p.dtype)
    do = do / B
    grads = {
        "W_hy": torch.einsum("btc,bth->ch", do, hs),
        "b_y": do.sum(dim=(0, 1)),
        "W_xh": torch.zeros_like(W_xh),
        "W_hh": torch.zeros_like(W_hh),
        "b_h": torch.zeros_like(b_h),
    }
    dh_next = torch.zeros_like(h0)
    for t in range(T - 1, -1, -1):
        dh = do[:, t] @ W_hy + dh_next
        da = dh * (1 - hs[:, t] * hs[:, t])
        prev = h0 if t == 0 else hs[:, t - 1]
        grads["W_xh"] = grads["W_xh"] + da.T @ x[:, t]
        grads["W_hh"] = grads["W_hh"] + da.T @ prev
        grads["b_h"] = grads["b_h"] + da.sum(0)
        dh_next = da @ W_hh.T
    grads["h0"] = dh_next
    return loss, grads
