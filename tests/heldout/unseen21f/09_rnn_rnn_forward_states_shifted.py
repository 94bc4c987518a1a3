# function: rnn.rnn_forward
# mistake: the state is stored before it is updated, so hs holds h_0 ... h_{T-1} (the initial
#   state is included and the final state is missing)
# class: off by one
# confirmed: max |diff| 2.26 vs torch.nn.RNN(batch_first=True) output on x=randn(3,5,4), H=6
#   (hs[:, 0] equals h0)
def rnn_forward(x, h0, W_xh, W_hh, b_h):
    B, T, D = x.shape
    h = h0
    hs = []
    for t in range(T):
        hs.append(h)
        h = rnn_cell(x[:, t, :], h, W_xh, W_hh, b_h)
    return torch.stack(hs, dim=1)
