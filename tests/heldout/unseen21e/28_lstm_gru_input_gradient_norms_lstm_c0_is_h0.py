# function: lstm_gru.input_gradient_norms
# mistake: for the LSTM the cell state starts from h0 instead of from zeros
# class: wrong initial state
# confirmed: kind='lstm' vs the same gradient taken through torch.nn.LSTM with c0 = 0 on
#   x=randn(3,5,4), H=6, float64: max |diff| 0.024 on norms between 0.028 and 0.685 (rnn and
#   gru agree)
import torch
def input_gradient_norms(kind, x, h0, params):
    from .rnn import rnn_forward
    with torch.enable_grad():
        xg = x.detach().clone().requires_grad_(True)
        if kind == "rnn":
            hs = rnn_forward(xg, h0, params["W_xh"], params["W_hh"], params["b_h"])
        elif kind == "lstm":
            hs, _ = lstm_forward(xg, h0, h0, params["W_ih"], params["W_hh"], params["b_ih"], params["b_hh"])
        else:
            hs, _ = gru_forward(xg, h0, params["W_ih"], params["W_hh"], params["b_ih"], params["b_hh"])
        (g,) = torch.autograd.grad(hs[:, -1].sum(), xg)
    return torch.sqrt((g * g).sum(dim=(0, 2))).detach()
