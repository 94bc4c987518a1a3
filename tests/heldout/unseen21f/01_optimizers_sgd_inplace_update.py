# function: optimizers.sgd
# mistake: the update is done in place on the parameter tensor (w -= lr * dw), so the caller's w
#   is changed and the function returns the argument itself instead of a new tensor
# class: state bookkeeping
# confirmed: max |diff| 0.252 after 4 steps vs torch.optim.SGD(lr=0.1) on w=randn(3,4); the
#   caller's w was changed in place and the returned w is the argument itself
def sgd(w, dw, state, lr=1e-2):
    w -= lr * dw
    return w, {}
