"""An exponential moving average of the weights (Polyak averaging), validated and served.

With ``TrainConfig.weight_average = a`` (0 < a < 1) the loop keeps, next to the weights the
optimizer moves, their average over the last ~``1 / (1 - a)`` steps: after step ``t`` (1, 2,
...) ``w_avg <- w_avg + (1 - d_t) (w - w_avg)`` with ``d_t = min(a, t / (t + 10))``, so the
first steps are not averaged with the starting weights for a thousand steps when ``a`` is
close to 1 (the warm-up of TensorFlow's ``ExponentialMovingAverage(num_updates=...)``).

Each epoch's validation, its checkpoint and therefore the served weights are the average; the
weights the optimizer moves go into the resume state (``train_weights``), so a resumed run
continues both exactly. A forecast from weights averaged over a few hundred noisy steps is
smoother than the last step's: with a loss as noisy as a pinball on returns the last step sits
anywhere in a wide basin, and which epoch is best becomes a lottery between seeds.

Only floating-point parameters are averaged; buffers (the pinned median) are the model's own.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

import torch
from torch import Tensor, nn

from foxhunt.errors import ModelDirError

WARMUP = 10
"""``d_t = min(a, t / (t + WARMUP))``: how fast the average forgets the first steps."""


class WeightAverage:
    """The running average of ``model``'s parameters (a copy of each, same dtype and device).

    Args:
        model: The network being trained; its current parameters start the average.
        decay: ``a`` in (0, 1): the weight of the old average at each step.
        steps: Optimizer steps already averaged (resuming: the loop's step counter).
    """

    def __init__(self, model: nn.Module, decay: float, steps: int = 0) -> None:
        if not 0.0 < decay < 1.0:
            raise ValueError(f"weight average decay must be in (0, 1), got {decay}")
        self.decay = decay
        self.steps = steps
        named = [(n, p) for n, p in model.named_parameters() if p.is_floating_point()]
        self._names = [n for n, _ in named]
        self._params = [p for _, p in named]
        self._average = [p.detach().clone() for p in self._params]

    def update(self) -> None:
        """Fold the parameters after one more optimizer step into the average."""
        self.steps += 1
        d = min(self.decay, self.steps / (self.steps + WARMUP))
        with torch.no_grad():
            torch._foreach_lerp_(self._average, [p.detach() for p in self._params], 1.0 - d)

    @contextmanager
    def applied(self) -> Iterator[dict[str, Tensor]]:
        """The model holds the average inside the block; yields the trained weights (by
        parameter name) it holds outside, for the resume state."""
        self._swap()
        try:
            yield dict(zip(self._names, self._average, strict=True))
        finally:
            self._swap()

    def restore_training(self, train_weights: Mapping[str, Tensor]) -> None:
        """Resuming: the model holds the saved average (the epoch checkpoint); take it as the
        average and load the optimizer's weights ``train_weights`` into the model."""
        with torch.no_grad():
            for name, avg, p in zip(self._names, self._average, self._params, strict=True):
                avg.copy_(p)
                p.copy_(train_weights[name])

    def _swap(self) -> None:
        with torch.no_grad():
            for avg, p in zip(self._average, self._params, strict=True):
                held = p.detach().clone()
                p.copy_(avg)
                avg.copy_(held)


def start_average(
    model: nn.Module, decay: float, step: int, resume: Mapping[str, Any] | None
) -> WeightAverage | None:
    """The run's average (None when ``decay`` is 0): from ``model``'s weights on a fresh run;
    resuming, ``model`` holds the last epoch's average and ``resume`` the optimizer's weights."""
    if not decay:
        return None
    average = WeightAverage(model, decay, steps=step)
    if resume is not None:
        if "train_weights" not in resume:
            raise ModelDirError(
                "the run averages its weights (weight_average) but its last resume state has "
                "no training weights: it was written without averaging"
            )
        average.restore_training(resume["train_weights"])
    return average


def averaged(
    average: WeightAverage | None,
) -> AbstractContextManager[dict[str, Tensor] | None]:
    """:meth:`WeightAverage.applied`; without an average the block changes nothing and yields
    None."""
    return average.applied() if average is not None else nullcontext()
