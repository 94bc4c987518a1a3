# function: lstm_gru.gru_forward
# mistake: the loop runs over x.shape[0] (the batch size) instead of the sequence length, so it
#   only works when B == T (fewer steps when B < T, an index error when B > T)
# class: shape case
# confirmed: B=3, T=5: hs of shape (3, 3, 6) instead of nn.GRU's (3, 5, 6); B=2, T=1: IndexError;
#   agrees only when B == T
def gru_forward(x, h0, W_ih, W_hh, b_ih, b_hh):
    h = h0
    hs = []
    for t in range(x.shape[0]):
        h = gru_cell(x[:, t], h, W_ih, W_hh, b_ih, b_hh)
        hs.append(h)
    return torch.stack(hs, dim=1), h
