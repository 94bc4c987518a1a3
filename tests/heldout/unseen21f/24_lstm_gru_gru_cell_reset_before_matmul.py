# function: lstm_gru.gru_cell
# mistake: the reset gate is applied to h before the matrix product, n = tanh(W_in x + b_in +
#   W_hn (r * h) + b_hn) (the notes' form), not PyTorch's r * (W_hn h + b_hn)
# class: wrong formula
# confirmed: max |diff| 0.45 vs torch.nn.GRUCell (bias_hh scaled by 3) on x=randn(3,4), H=5,
#   float64
def gru_cell(x, h_prev, W_ih, W_hh, b_ih, b_hh):
    H = h_prev.shape[1]
    W_hr, W_hz, W_hn = W_hh[:H], W_hh[H:2 * H], W_hh[2 * H:]
    b_hr, b_hz, b_hn = b_hh[:H], b_hh[H:2 * H], b_hh[2 * H:]
    gi = x @ W_ih.T + b_ih
    r = torch.sigmoid(gi[:, :H] + h_prev @ W_hr.T + b_hr)
    z = torch.sigmoid(gi[:, H:2 * H] + h_prev @ W_hz.T + b_hz)
    n = torch.tanh(gi[:, 2 * H:] + (r * h_prev) @ W_hn.T + b_hn)
    return (1 - z) * n + z * h_prev
