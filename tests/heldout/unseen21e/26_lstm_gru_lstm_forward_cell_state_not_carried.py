# function: lstm_gru.lstm_forward
# mistake: the new cell state is stored under another name and never fed back, so every step
#   starts from c0 (the hidden state is carried, the cell state is not)
# class: wrong quantity fed back
# confirmed: vs torch.nn.LSTM(4, 6, batch_first=True) on x=randn(3,5,4), float64: hs max
#   |diff| 0.482, c_T max |diff| 0.705
import torch
def lstm_forward(x, h0, c0, W_ih, W_hh, b_ih, b_hh):
    h, c = h0, c0
    hs = []
    c_t = c0
    for t in range(x.shape[1]):
        h, c_t = lstm_cell(x[:, t], h, c, W_ih, W_hh, b_ih, b_hh)
        hs.append(h)
    return torch.stack(hs, dim=1), (h, c_t)
