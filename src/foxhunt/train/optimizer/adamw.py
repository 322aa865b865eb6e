"""AdamW without ``torch.optim``: the same update and state dict, without the compiler stack.

Every ``torch.optim`` optimizer wraps ``step``, ``zero_grad``, ``state_dict`` and
``load_state_dict`` so that ``torch.compile`` leaves them alone, and that wrapper imports
``torch._dynamo`` (the compiler's front end) on the first call: about 50 MiB resident in a
training process (70 MiB in a fresh one) and 1.4 s, in a process that never compiles anything
(docs/memory.md). :class:`AdamW` is ``torch.optim.AdamW(fused=True)``: decoupled weight decay,
no AMSGrad, the update of every parameter of a group in one call of torch's fused kernel
(``torch._fused_adamw_``), so the trajectory is bit-identical to it on CPU, and its
``state_dict`` has torch's layout, so checkpoints written by either resume with the other
(``tests/train/optimizer/test_adamw.py``). The fused kernel reads each tensor as one run of
memory, so a parameter or gradient that is not contiguous is updated with the same arithmetic
one op at a time, as ``torch.optim.AdamW``'s default (``_single_tensor_adamw``) does; the two
agree to rounding, not bit for bit.

Fused, TFT-225's step (149 tensors, 5.8 M values) took 2.7 ms of CPU time against 10.8 one op
at a time, and it makes no parameter-sized temporary (docs/benchmarks.md, "Session 50").

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
            "fused": True,  # what this runs: torch's AdamW that loads the state dict runs it too
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
            fused: dict[tuple[torch.device, torch.dtype], list[Tensor]] = defaultdict(list)
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self._state(p)
                if _one_run(p, p.grad, state["exp_avg"], state["exp_avg_sq"]):
                    fused[(p.device, p.dtype)].append(p)
                else:
                    self._update(p, p.grad, group["lr"], beta1, beta2, group)
            for params in fused.values():
                self._fused_update(params, group["lr"], beta1, beta2, group)

    def _state(self, p: Tensor) -> dict[str, Tensor]:
        """``p``'s state, made at its first step: the moments as ``p``, a scalar step count."""
        state = self.state[p]
        if not state:
            dtype = torch.float64 if torch.get_default_dtype() == torch.float64 else torch.float32
            state["step"] = torch.tensor(0.0, dtype=dtype, device=p.device)
            state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        return state

    def _fused_update(
        self, params: list[Tensor], lr: float, beta1: float, beta2: float, group: dict[str, Any]
    ) -> None:
        """``torch.optim.adam._fused_adam`` for parameters of one device and dtype (no AMSGrad,
        no gradient scale): the step counts first, then one fused kernel over all of them."""
        states = [self.state[p] for p in params]
        steps = [s["step"] for s in states]
        torch._foreach_add_(steps, 1)
        torch._fused_adamw_(
            params,
            [p.grad for p in params],
            [s["exp_avg"] for s in states],
            [s["exp_avg_sq"] for s in states],
            [],
            steps,
            lr=lr,
            beta1=beta1,
            beta2=beta2,
            weight_decay=group["weight_decay"],
            eps=group["eps"],
            amsgrad=False,
            maximize=False,
        )

    def _update(
        self, p: Tensor, grad: Tensor, lr: float, beta1: float, beta2: float, group: dict[str, Any]
    ) -> None:
        """``torch.optim.adam._single_tensor_adam`` for one parameter (no AMSGrad, not
        capturable, not differentiable), in the same order of operations."""
        state = self.state[p]
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
            self.state[p] = {  # the step count keeps its dtype (torch's rule), on p's device
                k: v.to(device=p.device) if k == "step" else v.to(device=p.device, dtype=p.dtype)
                for k, v in values.items()
            }


def _one_run(*tensors: Tensor) -> bool:
    """Whether the fused kernel may take these tensors: each contiguous (it reads one run of
    memory per tensor) and none sparse."""
    return all(t.layout == torch.strided and t.is_contiguous() for t in tensors)
