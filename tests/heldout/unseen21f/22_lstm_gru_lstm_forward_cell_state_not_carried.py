# function: lstm_gru.lstm_forward
# mistake: the hidden state is carried from step to step but the cell state is not: every step
#   starts from c0 again, so the additive memory path is cut
# class: state bookkeeping
# confirmed: max |diff| 0.69 vs torch.nn.LSTM(batch_first=True) on x=randn(3,5,4), H=6; agrees
#   for T=1
def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):
    T = x.shape[1]
    h = h0
    hs = []
    for t in range(T):
        h, c = lstm_cell(x[:, t], h, c0, W_ih, W_hh, b_ih, b_hh)
        hs.append(h)
    return torch.stack(hs, dim=1), (h, c)
