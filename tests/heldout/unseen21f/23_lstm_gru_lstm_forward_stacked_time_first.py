# function: lstm_gru.lstm_forward
# mistake: the hidden states are stacked with torch.stack's default dim=0, so hs comes out
#   time-first (T, B, H) instead of batch-first (B, T, H)
# class: wrong axis
# confirmed: hs has shape (5, 3, 6) instead of nn.LSTM's (3, 5, 6) output for B=3, T=5, H=6 (h_T,
#   c_T are right)
def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):
    h, c = h0, c0
    outputs = []
    for t in range(x.size(1)):
        h, c = lstm_cell(x[:, t, :], h, c, W_ih, W_hh, b_ih, b_hh)
        outputs.append(h)
    hs = torch.stack(outputs)
    return hs, (h, c)
