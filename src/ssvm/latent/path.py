"""The warm path over C of the latent AP-SVM: CCCP at each C started from the previous C's model.

The latent objective is not convex, so a path does not promise the optima of cold fits: each C's
CCCP starts from the previous C's weights — hence from its imputation, which CCCP's first step
recomputes from them — instead of the mean-feature start (``init="mean"``), and runs until its own
stopping rule. Each fit is a CCCP fixed point of its C like a cold fit, usually after fewer steps
(the imputation changes little between neighbouring values of C).
"""

import copy

import numpy as np
from sklearn.base import clone

from .._cv_path import check_Cs

__all__ = ["latent_C_path"]


def latent_C_path(estimator, Cs, bags, y, offsets=None):
    """Fit ``estimator`` at every C of ``Cs``, in increasing order, each warm from the previous C.

    Parameters
    ----------
    estimator : LatentRankSVM
        The model to fit (unchanged: a clone is fitted); its ``C`` and ``warm_start`` are set by
        the path, its other parameters are kept. It must not write a ``checkpoint`` (one file
        cannot hold the runs of several values of C).
    Cs : int or array-like of float
        The values of C: an integer ``n`` means ``np.logspace(-4, 4, n)`` (as
        :class:`ssvm.RankSVMCV`).
    bags, y, offsets
        As :meth:`LatentRankSVM.fit`.

    Returns
    -------
    list of LatentRankSVM
        The fitted models, in the order of ``Cs``.

    Raises
    ------
    ValueError
        On a bad ``Cs`` or an estimator with a ``checkpoint``.
    """
    Cs = check_Cs(Cs)
    if estimator.checkpoint is not None:
        raise ValueError("latent_C_path fits one model per C: pass an estimator without a "
                         "checkpoint (checkpoint=None).")
    model = clone(estimator).set_params(warm_start=True)
    fitted = [None] * Cs.size
    for i in np.argsort(Cs, kind="stable"):
        model.set_params(C=float(Cs[i])).fit(bags, y, offsets=offsets)
        fitted[i] = copy.deepcopy(model)
    return fitted
