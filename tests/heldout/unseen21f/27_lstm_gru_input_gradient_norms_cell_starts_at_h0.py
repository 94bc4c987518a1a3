# function: lstm_gru.input_gradient_norms
# mistake: for the LSTM the initial cell state is set to h0 as well, instead of zeros
# class: wrong initial value
# confirmed: kind='lstm': max |diff| 1.05e-3 vs autograd through torch.nn.LSTM with c0 = zeros
#   (B=2, T=5, H=4, h0=randn); rnn and gru agree
def input_gradient_norms(kind, x, h0, params):
    from .rnn import rnn_forward

    x = x.detach().clone().requires_grad_(True)
    if kind == "rnn":
        hs = rnn_forward(x, h0, params["W_xh"], params["W_hh"], params["b_h"])
    elif kind == "lstm":
        hs, _ = lstm_forward(x, h0, h0, params["W_ih"], params["W_hh"], params["b_ih"], params["b_hh"])
    elif kind == "gru":
        hs, _ = gru_forward(x, h0, params["W_ih"], params["W_hh"], params["b_ih"], params["b_hh"])
    else:
        raise ValueError(kind)
    out = hs[:, -1].sum()
    (grad,) = torch.autograd.grad(out, x)
    return torch.linalg.vector_norm(grad, dim=(0, 2)).detach()
