"""What one parity run is asked to check (tolerances, seed, which checks), shared by the run, the gradient and
training checks and the verdict."""
from __future__ import annotations

from dataclasses import dataclass

from mindport.validators.parity.sides import (
    TrainSpec,
)

_PROJECTION_SEED = 7919  # the gradient check's random output weights: seed + this
_TARGET_SEED = 104729  # the training targets of step k: seed + this + k


@dataclass
class Settings:
    rtol: float = 1e-5
    atol: float = 1e-6
    seed: int = 0
    localize: bool = True
    graph_mode: bool = True
    grad: bool = False
    train: TrainSpec | None = None
    grad_rtol: float = 1e-4  # gradients sum over the batch and every position: float32 rounding grows with them
    # the absolute tolerance per unit of the largest value the forward computes (mindport.discovery.prove sets it: its
    # atol follows that scale); a re-check on perturbed weights scales its atol by its own run's largest value.
    # None: atol is absolute everywhere
    atol_per_unit: float | None = None
