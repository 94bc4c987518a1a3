# function: rnn.rnn_bptt
# mistake: the returned loss is the mean cross-entropy over batch and time (softmax_cross_entropy
#   of all B*T rows), not summed over time and averaged over the batch; the gradients are right
# class: wrong scale
# confirmed: loss 3.34 instead of 13.35 (a factor T = 4 too small) vs autograd's
#   F.cross_entropy(reduction='sum') / B on B=3, T=4, D=5, H=6, C=7; grads agree; T=1 agrees
def rnn_bptt(x, targets, h0, params):
    W_xh, W_hh, b_h = params["W_xh"], params["W_hh"], params["b_h"]
    W_hy, b_y = params["W_hy"], params["b_y"]
    B, T, D = x.shape
    hs = rnn_forward(x, h0, W_xh, W_hh, b_h)
    logits = hs @ W_hy.T + b_y
    C = logits.shape[-1]
    loss = softmax_cross_entropy(logits.reshape(B * T, C), targets.reshape(B * T))

    probs = torch.softmax(logits, dim=-1)
    dlogits = (probs - F.one_hot(targets, C).to(probs.dtype)) / B
    dW_hy = torch.einsum("btc,bth->ch", dlogits, hs)
    db_y = dlogits.sum(dim=(0, 1))
    dW_xh = torch.zeros_like(W_xh)
    dW_hh = torch.zeros_like(W_hh)
    db_h = torch.zeros_like(b_h)
    da_next = torch.zeros_like(h0)
    for t in reversed(range(T)):
        dh = dlogits[:, t] @ W_hy + da_next @ W_hh
        da = dh * (1 - hs[:, t] ** 2)
        h_prev = hs[:, t - 1] if t > 0 else h0
        dW_xh = dW_xh + da.T @ x[:, t]
        dW_hh = dW_hh + da.T @ h_prev
        db_h = db_h + da.sum(dim=0)
        da_next = da
    dh0 = da_next @ W_hh
    grads = {"W_xh": dW_xh, "W_hh": dW_hh, "b_h": db_h, "W_hy": dW_hy, "b_y": db_y, "h0": dh0}
    return loss, grads
