from .optimizer import Optimizer


class SGD(Optimizer):
    pass


class AdamW(Optimizer):
    """Allocates its state (exp_avg, exp_avg_sq: two tensors the size of each parameter) on the
    parameter's device at its first step, as torch.optim.AdamW does."""

    def step(self):
        if not hasattr(self, "state"):
            import torch

            self.state = [torch.empty(p.nbytes, device=p.device)
                          for g in self.param_groups for p in g["params"] for _ in range(2)]
        super().step()
