# function: optimizers.sgd_momentum
# mistake: the velocity is kept in the notes' other form (v = mu*v - lr*g, w = w + v), so the
#   weights follow the right trajectory but the stored "velocity" is -lr times PyTorch's buffer
# class: state bookkeeping
# confirmed: 5 steps vs torch.optim.SGD(lr=0.05, momentum=0.9), w=randn(3,4), float64:
#   weights agree (2e-16) but state['velocity'] differs from torch's momentum_buffer by up
#   to 3.21
import torch
def sgd_momentum(w, dw, state, lr=1e-2, momentum=0.9):
    v = state.get("velocity", torch.zeros_like(w))
    v = momentum * v - lr * dw
    return w + v, {"velocity": v}
