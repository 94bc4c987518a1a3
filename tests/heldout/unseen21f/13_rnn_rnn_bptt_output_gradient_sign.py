# function: rnn.rnn_bptt
# mistake: the gradient of the loss with respect to the logits is taken as onehot(y) - p instead
#   of p - onehot(y), so every gradient has the wrong sign (they point uphill)
# class: wrong sign
# confirmed: every gradient has the opposite sign: max |diff| 6.56 vs autograd on B=3, T=4, D=5,
#   H=6, C=7; the loss agrees
def rnn_bptt(x, targets, h0, params):
    W_xh, W_hh, b_h = params["W_xh"], params["W_hh"], params["b_h"]
    W_hy, b_y = params["W_hy"], params["b_y"]
    B, T, D = x.shape
    H = W_hh.shape[0]
    hs = rnn_forward(x, h0, W_xh, W_hh, b_h)
    o = hs @ W_hy.T + b_y
    C = o.shape[-1]
    loss = softmax_cross_entropy(o.reshape(-1, C), targets.reshape(-1)) * T

    y = F.one_hot(targets, C).to(o.dtype)
    do = (y - torch.softmax(o, dim=-1)) / B
    dW_hy = do.reshape(-1, C).T @ hs.reshape(-1, H)
    db_y = do.reshape(-1, C).sum(0)
    das = [None] * T
    da_next = torch.zeros_like(h0)
    for t in range(T - 1, -1, -1):
        dh = do[:, t] @ W_hy + da_next @ W_hh
        das[t] = dh * (1 - hs[:, t] ** 2)
        da_next = das[t]
    da = torch.stack(das, dim=1)
    h_prevs = torch.cat([h0[:, None], hs[:, :-1]], dim=1)
    dW_xh = da.reshape(-1, H).T @ x.reshape(-1, D)
    dW_hh = da.reshape(-1, H).T @ h_prevs.reshape(-1, H)
    db_h = da.reshape(-1, H).sum(0)
    dh0 = da[:, 0] @ W_hh
    return loss, {"W_xh": dW_xh, "W_hh": dW_hh, "b_h": db_h, "W_hy": dW_hy, "b_y": db_y, "h0": dh0}
