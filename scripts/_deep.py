"""Shared pieces of the deep-network scripts: the compared training losses, small networks and one
full-batch training loop that also times the loss.

Methods follow Song, Schwing, Zemel & Urtasun (ICML 2016, section 4.1): ``hinge-*`` the structured
hinge (:class:`ssvm.nn.RankHingeLoss`), ``pos-*`` / ``neg-*`` direct loss minimisation in the
positive / negative direction and ``per-*`` the perceptron update (:class:`ssvm.nn.DirectRankLoss`),
``x-ent`` cross-entropy; ``*-AP``, ``*-NDCG``, ``*-01`` the task loss.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from ssvm.nn import DirectRankLoss, RankHingeLoss

__all__ = ["METHODS", "Run", "limit_threads", "make_loss", "mlp", "train", "uses_epsilon"]

#: method -> (kind, task loss, direction)
METHODS = {
    "x-ent": ("x-ent", None, None),
    "hinge-AP": ("hinge", "ap", None),
    "hinge-NDCG": ("hinge", "ndcg", None),
    "hinge-01": ("hinge", "zero_one", None),
    "pos-AP": ("direct", "ap", "positive"),
    "neg-AP": ("direct", "ap", "negative"),
    "pos-NDCG": ("direct", "ndcg", "positive"),
    "pos-01": ("direct", "zero_one", "positive"),
    "neg-01": ("direct", "zero_one", "negative"),
    "per-AP": ("direct", "ap", "perceptron"),
    "per-01": ("direct", "zero_one", "perceptron"),
}


def limit_threads(n):
    """Run PyTorch and the BLAS under numpy with ``n`` threads each.

    On a shared machine idle worker threads spin while other jobs hold the cores: measured here
    under a load of 8 on 2 cores, a CNN step took 1.1 s with 2 PyTorch threads and 0.09 s with one,
    and a 65,536-long float64 dot product through OpenBLAS 20 ms with 2 threads and 0.013 ms with one.
    """
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(n)
    threadpool_limits(limits=n)


def uses_epsilon(method):
    """Whether the method has an ε to tune (the direct losses except the perceptron)."""
    kind, _, direction = METHODS[method]
    return kind == "direct" and direction != "perceptron"


def make_loss(method, epsilon=0.1, oracle="auto"):
    """The loss ``f(scores, target, qid) -> tensor`` of a method (x-ent: binary cross-entropy of the
    scores as logits; the multi-class tasks pass their own).

    Parameters
    ----------
    method : str
        A key of :data:`METHODS`.
    epsilon : float, default=0.1
        ε of the direct losses.
    oracle : str, default="auto"
        Oracle of the hinge losses.

    Returns
    -------
    callable
    """
    kind, loss, direction = METHODS[method]
    if kind == "hinge":
        return RankHingeLoss(loss, oracle=oracle)
    if kind == "direct":
        return DirectRankLoss(loss, epsilon=epsilon, direction=direction)

    def xent(scores, target, qid=None):
        return torch.nn.functional.binary_cross_entropy_with_logits(scores, target.to(scores.dtype))

    return xent


def mlp(sizes, weight_std=None):
    """ReLU network ``sizes[0] -> ... -> sizes[-1]`` (ReLU between the linear layers).

    Parameters
    ----------
    sizes : sequence of int
    weight_std : float, optional
        Draw every weight and bias from N(0, weight_std²) (Song et al.'s random teacher); default
        PyTorch's initialisation.

    Returns
    -------
    torch.nn.Sequential
    """
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    net = torch.nn.Sequential(*layers[:-1])
    if weight_std is not None:
        with torch.no_grad():
            for p in net.parameters():
                p.normal_(0.0, weight_std)
    return net


@dataclass
class Run:
    """One training run: the evaluations at the checkpoints and where the time went."""

    curve: list = field(default_factory=list)  # (iteration, metrics dict)
    steps: int = 0
    step_seconds: float = 0.0
    loss_seconds: float = 0.0
    diverged: str = ""

    @property
    def final(self):
        """Metrics at the last checkpoint (NaN when the run diverged)."""
        return self.curve[-1][1] if self.curve and not self.diverged else {"AP": np.nan, "NDCG": np.nan}

    @property
    def loss_share(self):
        """Fraction of the step time spent in the loss's forward (where the oracle runs)."""
        return self.loss_seconds / self.step_seconds if self.step_seconds else np.nan


def train(model, inputs, objective, *, iterations, lr, checkpoints=(), evaluate=None):
    """Full-batch Adam on ``objective(model(inputs))``.

    Parameters
    ----------
    model : torch.nn.Module
    inputs : Tensor
    objective : callable
        ``objective(outputs) -> scalar tensor`` (the loss applied to the batch's outputs).
    iterations : int
    lr : float
        Adam's learning rate.
    checkpoints : iterable of int
        Iterations (0: before training) after which ``evaluate(model)`` is recorded.
    evaluate : callable, optional
        ``evaluate(model) -> dict`` of metrics (called under ``torch.no_grad``).

    Returns
    -------
    Run
        A run whose loss raised (NaN scores: diverged) keeps its curve so far and the message.
    """
    run = Run()
    checkpoints = set(checkpoints)
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)

    def record(it):
        if evaluate is not None and it in checkpoints:
            with torch.no_grad():
                run.curve.append((it, evaluate(model)))

    record(0)
    for it in range(1, iterations + 1):
        t0 = time.perf_counter()
        optimiser.zero_grad(set_to_none=True)
        outputs = model(inputs)
        t1 = time.perf_counter()
        try:
            value = objective(outputs)
        except ValueError as exc:  # NaN scores after a diverged step
            run.diverged = str(exc)
            break
        t2 = time.perf_counter()
        value.backward()
        optimiser.step()
        run.step_seconds += time.perf_counter() - t0
        run.loss_seconds += t2 - t1
        run.steps += 1
        record(it)
    return run
