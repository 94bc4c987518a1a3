# function: rnn.rnn_bptt
# mistake: the gradient flowing back to h_t from the next step uses dL/da_{t+1} @ W_hh.T
#   instead of dL/da_{t+1} @ W_hh (the transpose of the forward map is taken twice); the
#   shapes fit because W_hh is square, and the gradients of the last step are still right
# class: transpose
# confirmed: vs autograd (loss.backward of F.cross_entropy(..., reduction='sum') / B) on
#   B=3,T=5,D=4,H=6,C=7, float64: W_hy, b_y agree; W_xh off by 0.67, W_hh 1.1, b_h 0.27, h0
#   0.68
import torch
import torch.nn.functional as F
def rnn_bptt(x, targets, h0, params):
    W_xh, W_hh, b_h = params["W_xh"], params["W_hh"], params["b_h"]
    W_hy, b_y = params["W_hy"], params["b_y"]
    B, T, _ = x.shape
    hs = rnn_forward(x, h0, W_xh, W_hh, b_h)
    o = hs @ W_hy.T + b_y
    C = o.shape[-1]
    loss = softmax_cross_entropy(o.reshape(-1, C), targets.reshape(-1)) * T
    p = torch.softmax(o, dim=-1)
    do = (p - F.one_hot(targets, C).to(p.dtype)) / B
    dW_hy = torch.einsum("btc,bth->ch", do, hs)
    db_y = do.sum(dim=(0, 1))
    dW_xh = torch.zeros_like(W_xh)
    dW_hh = torch.zeros_like(W_hh)
    db_h = torch.zeros_like(b_h)
    da_next = torch.zeros_like(h0)
    for t in range(T - 1, -1, -1):
        h_prev = hs[:, t - 1] if t > 0 else h0
        dh = do[:, t] @ W_hy + da_next @ W_hh.T
        da = dh * (1 - hs[:, t] ** 2)
        dW_xh = dW_xh + da.T @ x[:, t]
        dW_hh = dW_hh + da.T @ h_prev
        db_h = db_h + da.sum(dim=0)
        da_next = da
    dh0 = da_next @ W_hh
    return loss, {"W_xh": dW_xh, "W_hh": dW_hh, "b_h": db_h, "W_hy": dW_hy, "b_y": db_y, "h0": dh0}
