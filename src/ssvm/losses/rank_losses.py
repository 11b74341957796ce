"""QS-suitable ranking losses as small strategy objects (AP, NDCG).

A loss is described once, by two things (Mohapatra et al., section 4.1):

* its **discrete derivative** ``d_j(i) = δ_j(i+1) − δ_j(i)`` — the change of the loss when the
  j-th negative (in score order) moves from interleaving rank i to i+1.  It is handed to the
  compiled kernels as ``(kind, table)``: ``kind`` selects a closed form inside the one generic
  kernel (``KIND_AP``) or a table indexed by ``i + j`` (``KIND_SUM_TABLE``, enough for any
  NDCG-like loss ``1 − Σ D(ind(x)) / Σ_{i≤P} D(i)``);
* its **value from the ± pattern**, given as ``counts`` — ``counts[..., r-1]`` is the number of
  negatives with interleaving rank ``r`` (``r = 1 .. P+1``), which is exactly the ± pattern.

Everything is plain data (picklable, no closures), so oracles built from a loss can be shipped
to joblib workers.  A user-defined loss subclasses :class:`QSLoss` and may be passed as ``loss=``
to :func:`ssvm.losses.loss_augmented_inference`; :func:`ssvm.losses.check_qs_suitable` checks
conditions (C2)/(C3) for it numerically.
"""

import numpy as np

from ._core.derivative import discounts, loss_values, ndcg_norm

__all__ = ["QSLoss", "APLoss", "NDCGLoss", "KIND_AP", "KIND_NDCG_LOG2", "KIND_SUM_TABLE"]

# the kinds of derivative.pxd's enum (tests/losses/test_core_reference.py checks they agree)
KIND_AP = 0  # closed form −i / (P (i+j−1)(i+j))
KIND_NDCG_LOG2 = 1  # closed form (D(i+j) − D(i+j−1)) / Σ_{k≤P} D(k), D(m) = 1/log2(1+m); table[0] = 1/Σ D
KIND_SUM_TABLE = 2  # table[i + j]

_EMPTY = np.zeros(1, dtype=np.float64)


class QSLoss:
    """Base class of losses served by the generic QS kernel.

    Subclasses set :attr:`name` and implement :meth:`kernel_spec` and :meth:`value`; one that
    returns another kind than ``KIND_SUM_TABLE`` from :meth:`kernel_spec` declares it in
    :attr:`kind`.

    Attributes
    ----------
    name : str
        Short name used in messages and benchmark tables.
    kind : int
        How the kernels evaluate the discrete derivative: the ``kind`` that :meth:`kernel_spec`
        returns (``KIND_SUM_TABLE`` unless a subclass declares otherwise).
    compiled_batch : bool
        Whether the compiled batch loop of the QS oracle (:func:`ssvm.losses.qs.qs_batch`) serves
        this loss: that loop computes the table and Δ of the built-in AP and NDCG (log2) itself.
        Declared per class and not inherited: a subclass is served only if it declares it again
        (it may change :meth:`value`), else its queries are solved one call at a time.
    """

    name = "qs_loss"
    kind = KIND_SUM_TABLE
    compiled_batch = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "compiled_batch" not in vars(cls):  # declared by the class itself, or False
            cls.compiled_batch = False

    def kernel_spec(self, n_pos, n_neg):
        """Return ``(kind, table)`` describing the discrete derivative to the kernels.

        Parameters
        ----------
        n_pos, n_neg : int
            Number of positives P and negatives N of the query.

        Returns
        -------
        kind : int
            ``KIND_AP``, ``KIND_NDCG_LOG2`` (closed forms inside the kernel) or
            ``KIND_SUM_TABLE`` (any derivative that depends on i + j only).
        table : ndarray of float64
            For ``KIND_SUM_TABLE``: ``table[i + j] = δ_j(i+1) − δ_j(i)`` for
            ``2 ≤ i + j ≤ P + N``; for ``KIND_NDCG_LOG2``: ``[1 / Σ_{k≤P} D(k)]``;
            ignored for ``KIND_AP``.
        """
        raise NotImplementedError

    def value(self, counts):
        """Loss Δ(R*, R) of the ranking with the given ± pattern.

        Parameters
        ----------
        counts : array-like of int, shape (..., P + 1)
            ``counts[..., r - 1]`` = number of negatives with interleaving rank ``r``.

        Returns
        -------
        float or ndarray
            The loss, one value per leading index.
        """
        raise NotImplementedError

    def nonincreasing(self, n_pos, n_neg):
        """Whether moving any negative one rank down never increases the loss (d_j(i) ≤ 0).

        The QS kernel uses this to settle every negative scoring above all positives at rank 1
        without binning it; for losses where it fails, its score grid reaches up to the highest
        score instead.

        Parameters
        ----------
        n_pos, n_neg : int
            Query size.

        Returns
        -------
        bool
        """
        kind, table = self.kernel_spec(n_pos, n_neg)
        if kind in (KIND_AP, KIND_NDCG_LOG2):  # closed forms: never positive
            return True
        return bool(np.all(table[2 : n_pos + n_neg + 1] <= 0.0))

    def __repr__(self):
        return f"{type(self).__name__}()"

    def __eq__(self, other):
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self):
        return hash((type(self).__name__, tuple(sorted(self.__dict__.items()))))


def _values(kind, counts, discount_log2=True):
    """Δ (``_core.derivative.loss_value``) for counts of any leading shape (..., P + 1)."""
    return loss_values(kind, counts, discount_log2)


class APLoss(QSLoss):
    """Average-precision loss Δ = 1 − (1/P) Σ_x ind⁺(x) / ind(x).

    Discrete derivative (Yue et al. 2007; Mohapatra et al., Prop. 8):
    ``d_j(i) = −i / (P (i + j − 1)(i + j))``, evaluated in closed form by the kernels.
    """

    name = "ap"
    kind = KIND_AP
    compiled_batch = True

    def kernel_spec(self, n_pos, n_neg):
        """See :meth:`QSLoss.kernel_spec`; AP uses the closed form ``KIND_AP``."""
        return KIND_AP, _EMPTY

    def value(self, counts):
        """See :meth:`QSLoss.value`."""
        return _values(KIND_AP, counts)


_DISCOUNTS = ("log2", "chakrabarti")


class NDCGLoss(QSLoss):
    """NDCG loss Δ = 1 − Σ_x D(ind(x)) / Σ_{i ≤ P} D(i) for binary relevance.

    Parameters
    ----------
    discount : {"log2", "chakrabarti"}, default="log2"
        ``"log2"``: the convex D(i) = 1 / log2(1 + i) of the QS paper (QS-suitable).
        ``"chakrabarti"``: D(i) = 1 for i ≤ 2, 1 / log2(i) after (Chakrabarti et al. 2008) —
        not convex, violates (C3); kept to reproduce Remark 1 of the paper.

    Notes
    -----
    The discrete derivative depends on ``i + j`` only (Prop. 7):
    ``d_j(i) = (D(i + j) − D(i + j − 1)) / Σ_{k ≤ P} D(k)``.
    """

    name = "ndcg"

    def __init__(self, discount="log2"):
        if discount not in _DISCOUNTS:
            raise ValueError(f"unknown NDCG discount {discount!r}; choose from {sorted(_DISCOUNTS)}")
        self.discount = discount

    @property
    def kind(self):
        """``KIND_NDCG_LOG2`` (closed form) for the log2 discount, else ``KIND_SUM_TABLE``."""
        return KIND_NDCG_LOG2 if self.discount == "log2" else KIND_SUM_TABLE

    @property
    def compiled_batch(self):
        """The compiled batch loop serves the log2 discount (see :attr:`QSLoss.compiled_batch`)."""
        return self.discount == "log2"

    def _d(self, i):
        i = np.asarray(i, dtype=np.float64)
        return discounts(i, self.discount == "log2")

    def kernel_spec(self, n_pos, n_neg):
        """See :meth:`QSLoss.kernel_spec`; closed form for "log2", else a table on ``i + j``."""
        norm = ndcg_norm(n_pos, self.discount == "log2")
        if self.discount == "log2":
            return KIND_NDCG_LOG2, np.array([1.0 / norm])
        m = np.arange(n_pos + n_neg + 1, dtype=np.float64)
        table = np.zeros(n_pos + n_neg + 1, dtype=np.float64)
        if n_pos + n_neg >= 2:
            table[2:] = (self._d(m[2:]) - self._d(m[2:] - 1.0)) / norm
        return KIND_SUM_TABLE, table

    def value(self, counts):
        """See :meth:`QSLoss.value`."""
        return _values(KIND_NDCG_LOG2, counts, self.discount == "log2")

    def __repr__(self):
        return f"NDCGLoss(discount={self.discount!r})"
