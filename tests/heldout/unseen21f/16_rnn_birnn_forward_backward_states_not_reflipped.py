# function: rnn.birnn_forward
# mistake: the backward RNN runs on the time-reversed input, but its states are not flipped back,
#   so hs[:, t] pairs the forward state at t with the backward state at T-1-t
# class: state bookkeeping
# confirmed: max |diff| 1.43 vs torch.nn.RNN(bidirectional=True, batch_first=True) on
#   x=randn(3,5,4), H=6; agrees only for T=1
def birnn_forward(x, h0_fwd, h0_bwd, params_fwd, params_bwd):
    h_f = rnn_forward(x, h0_fwd, params_fwd["W_xh"], params_fwd["W_hh"], params_fwd["b_h"])
    x_rev = torch.flip(x, dims=[1])
    h_b = rnn_forward(x_rev, h0_bwd, params_bwd["W_xh"], params_bwd["W_hh"], params_bwd["b_h"])
    return torch.cat([h_f, h_b], dim=2)
