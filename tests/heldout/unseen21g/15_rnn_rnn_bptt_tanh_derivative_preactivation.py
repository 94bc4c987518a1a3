# function: rnn.rnn_bptt
# mistake: the tanh derivative is taken as 1 - a_t^2 of the pre-activation a_t instead of
#   1 - h_t^2 (with h_t = tanh(a_t)); the loss is right, every gradient behind it is wrong
# class: derivative slip
# confirmed: loss, W_hy and b_y grads right; vs autograd W_xh grad off by 7.08, W_hh 2.82, b_h
#   1.79, h0 3.0 (B=3 T=5 D=4 H=6 C=7)
import torch


def rnn_bptt(x, targets, h0, params):
    W_xh, W_hh, b_h, W_hy, b_y = [params[k] for k in ["W_xh", "W_hh", "b_h", "W_hy", "b_y"]]
    B, T, _ = x.shape
    C = W_hy.shape[0]
    # forward, keeping the pre-activations for the backward pass
    h = h0
    pre, hs = [], []
    for t in range(T):
        a = x[:, t] @ W_xh.T + h @ W_hh.T + b_h
        h = torch.tanh(a)
        pre.append(a)
        hs.append(h)
    H = torch.stack(hs, dim=1)
    o = H @ W_hy.T + b_y
    loss = softmax_cross_entropy(o.reshape(-1, C), targets.reshape(-1)) * T

    onehot = torch.zeros_like(o).scatter(2, targets.unsqueeze(-1), 1.0)
    do = (torch.softmax(o, dim=-1) - onehot) / B
    g = {k: torch.zeros_like(params[k]) for k in ["W_xh", "W_hh", "b_h", "W_hy", "b_y"]}
    g["W_hy"] = torch.einsum("btc,bth->ch", do, H)
    g["b_y"] = do.sum(dim=(0, 1))
    dh_future = torch.zeros_like(h0)
    for t in range(T - 1, -1, -1):
        dh = do[:, t] @ W_hy + dh_future
        da = dh * (1 - pre[t] ** 2)
        prev = hs[t - 1] if t > 0 else h0
        g["W_xh"] = g["W_xh"] + da.T @ x[:, t]
        g["W_hh"] = g["W_hh"] + da.T @ prev
        g["b_h"] = g["b_h"] + da.sum(dim=0)
        dh_future = da @ W_hh
    g["h0"] = dh_future
    return loss, g
