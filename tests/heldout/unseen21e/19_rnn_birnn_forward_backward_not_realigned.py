# function: rnn.birnn_forward
# mistake: the backward RNN is run on the time-reversed input but its states are not flipped
#   back, so hs[:, t] pairs the forward state at t with the backward state at T-1-t
# class: reshape/ordering (position alignment)
# confirmed: vs torch.nn.RNN(4, 6, bidirectional=True, batch_first=True) on x=randn(3,5,4),
#   float64: forward half agrees (2e-16), backward half max |diff| 1.42
import torch
def birnn_forward(x, h0_fwd, h0_bwd, params_fwd, params_bwd):
    fwd = rnn_forward(x, h0_fwd, params_fwd["W_xh"], params_fwd["W_hh"], params_fwd["b_h"])
    bwd = rnn_forward(torch.flip(x, dims=[1]), h0_bwd, params_bwd["W_xh"], params_bwd["W_hh"], params_bwd["b_h"])
    return torch.cat([fwd, bwd], dim=-1)
