# function: lstm_gru.gru_cell
# mistake: the notes' (Cho et al.) form: the reset gate multiplies h before the product,
#   W_hn (r * h) + b_hn, instead of PyTorch's r * (W_hn h + b_hn)
# class: convention mix-up (notes vs PyTorch)
# confirmed: max |diff| 0.28 vs torch.nn.GRUCell on x=randn(3,4), H=5
import torch


def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
    W_ir, W_iz, W_in = W_ih.chunk(3, dim=0)
    W_hr, W_hz, W_hn = W_hh.chunk(3, dim=0)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x @ W_ir.T + b_ir + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(x @ W_iz.T + b_iz + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(x @ W_in.T + b_in + (r * h_prev) @ W_hn.T + b_hn)
    return (1 - z) * n + z * h_prev
