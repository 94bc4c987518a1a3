# function: transformer.feed_forward
# mistake: the first bias b1 is added after the ReLU instead of inside it, relu(x W1^T) + b1
# class: wrong order
# confirmed: max |diff| 0.09 vs Linear-ReLU-Linear (torch.nn.Linear layers) on x=randn(2,3,4),
#   F=8
def feed_forward(x, W1, b1, W2, b2):
    hidden = torch.relu(x @ W1.T) + b1
    return hidden @ W2.T + b2
