"""PyTorch loss layers for rank-based measures: the structured hinge and direct loss minimisation.

:class:`RankHingeLoss` and :class:`DirectRankLoss` take a batch's score tensor, its relevance and
optionally a query id per row, and hand them to :func:`ssvm.losses.rank_hinge` /
:func:`ssvm.losses.direct_loss_gradient` (exact oracles, compiled, on the CPU). Their backward returns
that gradient moved to the scores' device and dtype, so a network on any device trains with them.

Queries without a relevant or without an irrelevant row are skipped (zero gradient on their rows);
the value is the mean over the queries left, and a batch where none is left raises a ValueError —
sample batches with at least one relevant and one irrelevant row per query, or pass whole queries.

Needs the optional extra ``torch`` (``pip install "ssvm[torch]"``); importing :mod:`ssvm` does not
import PyTorch, only this module does.
"""

import numpy as np

try:
    import torch
    from torch.autograd.function import once_differentiable
except ImportError as exc:  # pragma: no cover - the extra is part of .[dev]
    raise ImportError('ssvm.nn needs PyTorch; install it with pip install "ssvm[torch]"') from exc

from .functional import evaluate_direct, evaluate_hinge
from .losses.direct import direct_loss_oracle
from .losses.registry import get_oracle

__all__ = ["RankHingeLoss", "DirectRankLoss"]


def _as_numpy(values, name):
    """A tensor (any device) or array-like as a numpy array on the CPU."""
    if isinstance(values, torch.Tensor):
        if values.requires_grad:
            values = values.detach()
        if values.is_floating_point() and values.dtype not in (torch.float32, torch.float64):
            values = values.to(torch.float64)  # half / bfloat16 have no numpy twin
        return values.cpu().numpy()
    if values is None:
        raise ValueError(f"{name} is required")
    return np.asarray(values)


class _ScoreLossFunction(torch.autograd.Function):
    """Forward: the value from a score-space evaluation; backward: its gradient times grad_output."""

    @staticmethod
    def forward(ctx, scores, evaluate, oracle, target, qid):
        if not scores.is_floating_point():
            raise ValueError(f"scores must be a floating-point tensor, got {scores.dtype}")
        value, grad = evaluate(oracle, _as_numpy(scores, "scores"), _as_numpy(target, "target"),
                               None if qid is None else _as_numpy(qid, "qid"))
        ctx.save_for_backward(torch.from_numpy(grad).to(device=scores.device, dtype=scores.dtype))
        return torch.tensor(value, dtype=scores.dtype, device=scores.device)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        (grad,) = ctx.saved_tensors
        return grad_output * grad, None, None, None, None


class RankHingeLoss(torch.nn.Module):
    """Mean structured hinge over queries (AP, NDCG, 0-1, precision@k) as a PyTorch loss.

    ``forward`` returns ``(1/Q) Σ_q max_R [Δ(R*, R) + s_q·(Ψ(R) − Ψ(R*))]`` over the queries with a
    relevant and an irrelevant row; ``backward`` its exact subgradient, the oracles' ``c / Q``
    (:func:`ssvm.losses.rank_hinge`). The hinge is convex and piecewise linear in the scores and
    upper-bounds the task loss of the ranking by score.

    Parameters
    ----------
    loss : str or QSLoss, default="ap"
        ``"ap"``, ``"ndcg"``, ``"zero_one"``, ``"precision_at_k"`` or a QS loss object.
    oracle : str, default="auto"
        Loss-augmented inference (``"qs"`` for AP/NDCG under ``"auto"``; ``"yue"``, ``"dp"``,
        ``"chakrabarti"``, ... give the same result more slowly).
    **loss_params
        ``k`` for ``"precision_at_k"``; ``gain`` for ``"ndcg"``: ``"exponential"`` (2^r − 1, the
        default), ``"linear"`` (r) or ``"binary"`` ([r > 0]) — with integer grades in ``target``
        the graded hinge ``Σ_t α_t H_t`` (:func:`ssvm.losses.rank_hinge`).

    Raises
    ------
    ValueError
        At construction for an unknown loss or oracle; in ``forward`` for NaN or infinite scores,
        shapes that do not match, or a batch without a query that has both a relevant and an
        irrelevant row.

    Examples
    --------
    >>> import torch
    >>> from ssvm.nn import RankHingeLoss
    >>> scores = torch.tensor([2.0, 1.0, 0.5], requires_grad=True)
    >>> loss = RankHingeLoss("ap")(scores, torch.tensor([1, 0, 1]))
    >>> loss.backward()
    >>> round(loss.item(), 4), scores.grad.tolist()
    (0.6667, [0.0, 1.0, -1.0])
    """

    def __init__(self, loss="ap", oracle="auto", **loss_params):
        super().__init__()
        self.loss = loss
        self.oracle = oracle
        self.loss_params = loss_params
        self._oracle = get_oracle(loss, oracle, **loss_params)

    def forward(self, scores, target, qid=None):
        """Mean hinge of the batch.

        Parameters
        ----------
        scores : Tensor of shape (n,)
            Floating point, any device.
        target : Tensor or array-like of shape (n,)
            Relevance: bool, or numbers of which those > 0 are relevant.
        qid : Tensor or array-like of shape (n,), optional
            Query id per row; by default the batch is one query.

        Returns
        -------
        Tensor
            0-dimensional, of the scores' dtype and device.
        """
        return _ScoreLossFunction.apply(scores, evaluate_hinge, self._oracle, target, qid)

    def extra_repr(self):
        params = "".join(f", {name}={value!r}" for name, value in self.loss_params.items())
        return f"loss={self.loss!r}, oracle={self.oracle!r}{params}"


class DirectRankLoss(torch.nn.Module):
    """Direct loss minimisation (Song, Schwing, Zemel & Urtasun, ICML 2016) as a PyTorch loss.

    ``forward`` returns the task loss of the ranking by score (mean 1 − AP, 1 − NDCG or error rate
    over the queries with a relevant and an irrelevant row): piecewise constant, for monitoring.
    ``backward`` does not differentiate it: it returns Song et al.'s estimate of the gradient of the
    expected task loss, ``± (1/ε) [Ψ(R_dir) − Ψ(R_w)]`` (:func:`ssvm.losses.direct_loss_gradient`).

    Parameters
    ----------
    loss : {"ap", "ndcg", "zero_one"} or QSLoss, default="ap"
        Task loss; ``ssvm.losses.loss_entry(loss).directions`` lists the directions it has.
    epsilon : float, default=0.1
        ε > 0. The gradient scales like 1/ε; the useful ε depends on the scale of the scores.
    direction : {"positive", "negative", "perceptron"}, default="positive"
        ``"positive"`` (pos-AP, the best in Song et al.'s experiments): away from the loss-augmented
        ranking, found by QS. ``"negative"`` (AP and 0-1): towards the loss-diminished ranking
        (O(PN) dynamic program for AP). ``"perceptron"``: towards R* (per-AP; ``epsilon`` unused).
    **loss_params
        ``gain`` for ``"ndcg"`` (as :class:`RankHingeLoss`): with grades, the gradient is
        ``Σ_t α_t (1/ε) [Ψ_t(R_dir,t) − Ψ_t(R_w)]`` over the grade thresholds.

    Raises
    ------
    ValueError
        At construction for an unknown loss or direction, a loss without that direction, or ε ≤ 0;
        in ``forward`` as :class:`RankHingeLoss`.

    Examples
    --------
    >>> import torch
    >>> from ssvm.nn import DirectRankLoss
    >>> scores = torch.tensor([0.4, 0.3, 0.2], requires_grad=True)
    >>> loss = DirectRankLoss("ap", epsilon=1.0)(scores, torch.tensor([1, 0, 1]))
    >>> loss.backward()
    >>> round(loss.item(), 4), scores.grad.tolist()
    (0.1667, [-1.0, 1.0, 0.0])
    """

    def __init__(self, loss="ap", epsilon=0.1, direction="positive", **loss_params):
        super().__init__()
        self.loss = loss
        self.epsilon = epsilon
        self.direction = direction
        self.loss_params = loss_params
        self._oracle = direct_loss_oracle(loss, epsilon, direction, **loss_params)

    def forward(self, scores, target, qid=None):
        """Task loss of the batch's ranking by score (its backward: the direct-loss gradient).

        Parameters
        ----------
        scores : Tensor of shape (n,)
        target : Tensor or array-like of shape (n,)
        qid : Tensor or array-like of shape (n,), optional

        Returns
        -------
        Tensor
            0-dimensional, of the scores' dtype and device.
        """
        return _ScoreLossFunction.apply(scores, evaluate_direct, self._oracle, target, qid)

    def extra_repr(self):
        params = "".join(f", {name}={value!r}" for name, value in self.loss_params.items())
        return f"loss={self.loss!r}, epsilon={self.epsilon!r}, direction={self.direction!r}{params}"
