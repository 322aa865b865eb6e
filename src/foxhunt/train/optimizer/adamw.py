"""AdamW without ``torch.optim``: the same update and state dict, without the compiler stack.

Every ``torch.optim`` optimizer wraps ``step``, ``zero_grad``, ``state_dict`` and
``load_state_dict`` so that ``torch.compile`` leaves them alone, and that wrapper imports
``torch._dynamo`` (the compiler's front end) on the first call: about 50 MiB resident in a
training process (70 MiB in a fresh one) and 1.4 s, in a process that never compiles anything
(docs/memory.md). :class:`AdamW` is ``torch.optim.AdamW`` as it runs by default on CPU (one
parameter at a time, decoupled weight decay, no AMSGrad), op for op, so the trajectory is
bit-identical on CPU, and its ``state_dict`` has torch's layout, so checkpoints written by either
resume with the other (``tests/train/optimizer/test_adamw.py``). On CUDA torch would batch the same
arithmetic over tensors (``foreach``); this runs it per parameter: the same update, more kernel
launches.

``torch.utils.checkpoint`` imports ``torch._dynamo`` the same way: runs with checkpointing or
recomputation still hold it, and the memory estimate counts it for them only
(``foxhunt.memory.process``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import Tensor


class AdamW:
    """AdamW (Loshchilov & Hutter) over parameter groups, ``torch.optim.AdamW``'s arithmetic.

    Args:
        params: Parameter groups (dicts with ``params`` and any per-group setting; other keys,
            e.g. ``names``, are kept and ignored) or an iterable of parameters.
        lr: Learning rate (the training schedule overwrites each group's ``lr`` every step).
        betas: Decay rates of the first and second moment averages.
        eps: Added to the denominator.
        weight_decay: Decoupled weight decay (``param *= 1 - lr * weight_decay``).
    """

    def __init__(
        self,
        params: Iterable[dict[str, Any]] | Iterable[Tensor],
        *,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
    ) -> None:
        # torch's keys, so a state_dict written by either loads into the other
        self.defaults: dict[str, Any] = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": False,
            "maximize": False,
            "foreach": None,
            "capturable": False,
            "differentiable": False,
            "fused": None,
            "decoupled_weight_decay": True,
        }
        groups = list(params)
        if groups and not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        self.param_groups: list[dict[str, Any]] = []
        for group in groups:
            assert isinstance(group, dict)
            self.param_groups.append({**self.defaults, **group, "params": list(group["params"])})
        self.state: defaultdict[Tensor, dict[str, Tensor]] = defaultdict(dict)

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> None:
        """Update every parameter that has a gradient."""
        if closure is not None:
            raise ValueError("AdamW.step takes no closure")
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is not None:
                    self._update(p, p.grad, group["lr"], beta1, beta2, group)

    def _update(
        self, p: Tensor, grad: Tensor, lr: float, beta1: float, beta2: float, group: dict[str, Any]
    ) -> None:
        """``torch.optim.adam._single_tensor_adam`` for one parameter (no AMSGrad, not
        capturable, not differentiable), in the same order of operations."""
        state = self.state[p]
        if not state:
            dtype = torch.float64 if torch.get_default_dtype() == torch.float64 else torch.float32
            state["step"] = torch.tensor(0.0, dtype=dtype)
            state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        step_t, exp_avg, exp_avg_sq = state["step"], state["exp_avg"], state["exp_avg_sq"]
        step_t += 1
        if group["weight_decay"] != 0:
            p.mul_(1 - lr * group["weight_decay"])
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        step = step_t.item()
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        step_size = lr / bias_correction1
        denom = (exp_avg_sq.sqrt() / bias_correction2**0.5).add_(group["eps"])
        p.addcdiv_(exp_avg, denom, value=-step_size)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's gradient (``None``, or zeros with ``set_to_none=False``)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.detach_().zero_()

    def state_dict(self) -> dict[str, Any]:
        """``torch.optim.Optimizer.state_dict``'s layout: parameters numbered in group order."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state dict written by :meth:`state_dict` or by ``torch.optim.AdamW``.

        Raises:
            ValueError: Its groups do not match this optimizer's in number or sizes.
        """
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups) or any(
            len(s["params"]) != len(g["params"])
            for s, g in zip(saved, self.param_groups, strict=True)
        ):
            raise ValueError("optimizer state does not match the model's parameter groups")
        by_index: dict[int, Tensor] = {}
        for s, g in zip(saved, self.param_groups, strict=True):
            by_index.update(zip(s["params"], g["params"], strict=True))
            g.update({k: v for k, v in s.items() if k != "params"})
        self.state = defaultdict(dict)
        for i, values in state_dict["state"].items():
            p = by_index[int(i)]
            self.state[p] = {
                k: v if k == "step" else v.to(device=p.device, dtype=p.dtype)
                for k, v in values.items()
            }
