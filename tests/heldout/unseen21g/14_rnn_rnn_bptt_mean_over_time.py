# function: rnn.rnn_bptt
# mistake: the loss is the mean over all B*T positions (softmax_cross_entropy on the flattened
#   logits) and dL/do carries 1/(B*T), so loss and every gradient are 1/T of the asked ones
# class: wrong normalisation
# confirmed: vs autograd of F.cross_entropy(reduction='sum')/B: loss off by 8.45, gradients by up
#   to 1.05 (B=3 T=5 D=4 H=6 C=7)
import torch
import torch.nn.functional as F


def rnn_bptt(x, targets, h0, params):
    W_xh, W_hh, b_h = params["W_xh"], params["W_hh"], params["b_h"]
    W_hy, b_y = params["W_hy"], params["b_y"]
    B, T, D = x.shape
    hs = rnn_forward(x, h0, W_xh, W_hh, b_h)
    logits = hs @ W_hy.T + b_y
    C = logits.shape[-1]
    loss = softmax_cross_entropy(logits.reshape(B * T, C), targets.reshape(B * T))

    probs = torch.softmax(logits, dim=-1)
    dout = (probs - F.one_hot(targets, C).to(probs.dtype)) / (B * T)
    dW_hy = torch.zeros_like(W_hy)
    db_y = torch.zeros_like(b_y)
    dW_xh = torch.zeros_like(W_xh)
    dW_hh = torch.zeros_like(W_hh)
    db_h = torch.zeros_like(b_h)
    da_next = torch.zeros_like(h0)
    for t in reversed(range(T)):
        h_t = hs[:, t]
        h_prev = hs[:, t - 1] if t > 0 else h0
        dW_hy = dW_hy + dout[:, t].T @ h_t
        db_y = db_y + dout[:, t].sum(0)
        dh = dout[:, t] @ W_hy + da_next @ W_hh
        da = dh * (1 - h_t ** 2)
        dW_xh = dW_xh + da.T @ x[:, t]
        dW_hh = dW_hh + da.T @ h_prev
        db_h = db_h + da.sum(0)
        da_next = da
    grads = {"W_xh": dW_xh, "W_hh": dW_hh, "b_h": db_h, "W_hy": dW_hy, "b_y": db_y, "h0": da_next @ W_hh}
    return loss, grads
