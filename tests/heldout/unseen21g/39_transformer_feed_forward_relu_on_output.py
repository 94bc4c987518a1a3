# function: transformer.feed_forward
# mistake: a ReLU is applied after the second linear layer too, so the block's output can never
#   be negative
# class: extra nonlinearity
# confirmed: max |diff| 5.48 vs nn.Linear -> relu -> nn.Linear on x=randn(2,3,4), F=8
import torch


def feed_forward(x, W1, b1, W2, b2):
    hidden = torch.relu(x @ W1.T + b1)
    return torch.relu(hidden @ W2.T + b2)
