from .optimizer import Optimizer


class SGD(Optimizer):
    pass
