# function: optimizers.sgd_momentum
# mistake: follows the notes' form v = mu*v - lr*g, w = w + v, so w moves correctly but the
#   stored velocity is PyTorch's buffer scaled by -lr
# class: convention mix-up (notes vs PyTorch)
# confirmed: w matches torch.optim.SGD(lr=0.01, momentum=0.9) to 1e-16, velocity vs its
#   momentum_buffer max |diff| 3.67 over 3 steps (w=randn(5,3))
import torch


def sgd_momentum(w, dw, state, lr=1e-2, momentum=0.9):
    v = state.get("velocity", torch.zeros_like(w))
    v = momentum * v - lr * dw
    w_next = w + v
    return w_next, {"velocity": v}
