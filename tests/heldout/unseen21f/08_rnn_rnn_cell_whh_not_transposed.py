# function: rnn.rnn_cell
# mistake: the recurrent weight is applied as h_prev @ W_hh instead of h_prev @ W_hh.T (W_hh is
#   square, so nothing fails, but each hidden unit gets the wrong row of weights)
# class: transpose/reshape
# confirmed: max |diff| 1.53 vs torch.nn.RNNCell (bias_ih + bias_hh = b_h) on x=randn(3,4), H=5,
#   float64
def rnn_cell(x, h_prev, W_xh, W_hh, b_h):
    a = x @ W_xh.T + h_prev @ W_hh + b_h
    return torch.tanh(a)
