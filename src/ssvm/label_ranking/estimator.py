"""``LabelRankSVM``: rank each sample's labels by precision@k with c-star label dependencies.

This module validates, chooses the core, builds targets and dispatches; the math lives in
``problem`` (the hinge), ``inference`` (the exact top-k selection), ``core`` and ``evaluation``.
"""

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, MultiOutputMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ssvm._fitting import check_solver_params, run_solver, say
from ssvm.exceptions import DegenerateQueriesWarning, external_stacklevel, warn_once
from ssvm.solvers import SOLVERS

from .core import select_core
from .evaluation import break_even_precision, choose_threshold, interactive_bep
from .inference import MAX_CORE, star_inference
from .problem import LabelRankingHinge, StarLayout, impute_targets

__all__ = ["LabelRankSVM"]


class LabelRankSVM(MultiOutputMixin, BaseEstimator):
    """Label ranking by precision@k with pairwise label terms on a c-star (Mensink et al. 2011).

    Each sample ranks its L labels. A label set ``t`` of sample ``x`` scores
    ``f(x, t) = Σ_i t_i s_i(x) + Σ_{i<j} t_i t_j P_ij`` with ``s_i(x) = v_i + w_i·x`` and ``P``
    non-zero only on pairs that touch one of ``n_core`` *core* labels (a c-star), so that the
    best set of any size is found exactly in O(2^n_core · L). Training minimises
    ``J = ½‖w‖² + C·(1/Q) Σ_q H_q(w)`` (all parameters regularised) where ``H_q`` is the structured
    hinge of the precision@k loss of sample ``q``, minimised with one of the package's solvers.

    Parameters
    ----------
    C : float, default=1.0
        Weight of the mean hinge against ``½‖w‖²``.
    k : "relevant" or int, default="relevant"
        ``"relevant"``: each sample's k is its number of relevant labels (break-even precision;
        the best set is unique, and samples with no or only relevant labels carry no ranking
        information and are skipped, with a
        :class:`~ssvm.exceptions.DegenerateQueriesWarning`). An int: a fixed cut-off ``1 <= k < n_labels``; samples
        with more or fewer than k relevant labels have many minimal-loss sets, and training
        alternates (CCCP, the paper's eq. 8) between imputing the best of them and the convex fit.
    n_core : int, default=0
        Number of core labels, at most 20 (inference enumerates 2^n_core core states).
        0 is the independent model (no pairwise terms).
    core : "mutual_information" or array-like of int, default="mutual_information"
        How to choose the core: greedily by joint mutual information of the training labels
        (:func:`ssvm.label_ranking.select_core`), or the given label indices (then
        ``n_core`` must equal their number).
    solver : str, default="cutting_plane"
        A key of ``ssvm.solvers.SOLVERS``.
    tol : float, default=1e-3
        Solver tolerance (relative certified duality gap).
    max_iter : int, default=None
        Solver iteration cap (``None``: the solver's default).
    max_cccp_iter : int, default=10
        Most imputation rounds for an integer ``k`` (unused with ``"relevant"``); they stop
        earlier when the imputed targets no longer change or ``J`` decreases by at most
        ``tol·J`` from one round to the next.
    random_state : int, RandomState instance or None, default=None
        Seeds the stochastic solvers.
    verbose : int, default=0
        ``1``: one line per solve on stdout (as :class:`ssvm.RankSVM`); ``≥ 2``: also one per
        solver iteration.
    solver_params : dict, default=None
        Extra keyword arguments of the solver, e.g. ``{"ocas": False}``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_labels, n_features)
        Per-label weights ``w_i``.
    intercept_ : ndarray of shape (n_labels,)
        Per-label biases ``v_i``.
    pairwise_ : ndarray of shape (n_labels, n_labels)
        Symmetric pairwise weights ``P`` (zero off the c-star and on the diagonal).
    core_ : ndarray of int64, shape (n_core,)
        Core labels.
    threshold_ : float
        Only for ``k="relevant"``: the per-label price ``τ`` of predicted sets, chosen to maximise
        the mean per-sample F1 on the training data (``predict`` returns the set maximising
        ``f(x, t) − τ·|t|``).
    n_iter_ : int
        Solver iterations (summed over imputation rounds).
    n_cccp_iter_ : int
        Imputation rounds (1 for ``k="relevant"``).
    objective_ : float
        Final objective J.
    history_ : list of dict
        The last solve's history records.
    n_samples_fit_ : int
        Samples trained on.
    n_skipped_queries_ : int
        Samples skipped (``k="relevant"``: no relevant or no irrelevant label).
    n_features_in_ : int
        Number of input features.

    See Also
    --------
    ssvm.RankSVM : ranks samples for one label instead of labels for one sample.

    Notes
    -----
    Kernels enter through an explicit feature map in a pipeline, e.g.
    ``make_pipeline(Nystroem(kernel="rbf", n_components=300), LabelRankSVM())``.

    Examples
    --------
    >>> from sklearn.datasets import make_multilabel_classification
    >>> from ssvm import LabelRankSVM
    >>> X, Y = make_multilabel_classification(n_samples=200, n_classes=5, random_state=0)
    >>> model = LabelRankSVM(C=1.0, n_core=2).fit(X / X.max(), Y)
    >>> model.predict(X[:2] / X.max()).shape
    (2, 5)
    >>> 0.0 <= model.score(X / X.max(), Y) <= 1.0
    True
    """

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "k": [StrOptions({"relevant"}), Interval(Integral, 1, None, closed="left")],
        "n_core": [Interval(Integral, 0, None, closed="left")],
        "core": [StrOptions({"mutual_information"}), "array-like"],
        "solver": [StrOptions(set(SOLVERS))],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "max_cccp_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "solver_params": [dict, None],
    }

    def __init__(self, C=1.0, k="relevant", n_core=0, core="mutual_information",
                 solver="cutting_plane", *, tol=1e-3, max_iter=None, max_cccp_iter=10,
                 random_state=None, verbose=0, solver_params=None):
        self.C = C
        self.k = k
        self.n_core = n_core
        self.core = core
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.max_cccp_iter = max_cccp_iter
        self.random_state = random_state
        self.verbose = verbose
        self.solver_params = solver_params

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        tags.target_tags.single_output = False
        return tags

    # ------------------------------------------------------------------ fit

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, Y):
        """Fit the model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; must be finite.
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Binary label indicator matrix (0/1 or bool), at least two labels.

        Returns
        -------
        self : LabelRankSVM
            The fitted estimator.

        Raises
        ------
        ValueError
            For NaN or infinite X, Y that is not a binary indicator matrix of at least two labels,
            ``k >= n_labels``, ``n_core > 20`` or ``> n_labels``, an invalid explicit core, or no
            sample with ranking information.
        """
        solver_params = check_solver_params(self.solver, self.solver_params, "LabelRankSVM")
        shape = Y.shape if hasattr(Y, "shape") else np.shape(Y)
        if len(shape) == 2 and shape[0] > 0 and shape[1] == 0:
            _check_indicator(Y)  # no labels: say so before sklearn reports "0 feature(s)"
        X, Y = validate_data(self, X, Y, accept_sparse="csr", dtype=np.float64,
                             multi_output=True)
        Y = _check_indicator(Y)
        self.core_ = self._resolve_core(Y)
        X, Y, k = self._rankable(X, Y)
        layout = StarLayout(Y.shape[1], X.shape[1], self.core_)
        w, result = self._cccp(X, Y, k, layout, solver_params)
        W, v, theta = layout.split(w)
        self.coef_, self.intercept_ = W.copy(), v.copy()
        self.pairwise_ = layout.pairwise_matrix(theta)
        self.objective_ = float(result.objective)
        self.history_ = list(result.history)
        self.n_samples_fit_ = X.shape[0]
        if self.k == "relevant":
            self.threshold_, _ = choose_threshold(self._unary(X), *self._star(), Y)
        return self

    def _rankable(self, X, Y):
        """The samples to train on and their cut-offs ``k`` (``k="relevant"``: each sample's
        number of relevant labels, without the samples whose labels cannot be ranked)."""
        n_labels = Y.shape[1]
        if self.k != "relevant":
            if self.k >= n_labels:
                raise ValueError(f"k={self.k} must be smaller than the number of labels "
                                 f"({n_labels}): the top k would hold every label.")
            self.n_skipped_queries_ = 0
            return X, Y, np.full(Y.shape[0], self.k, dtype=np.int64)
        k = Y.sum(axis=1)
        keep = (k > 0) & (k < n_labels)
        self.n_skipped_queries_ = int((~keep).sum())
        if not keep.all():
            warn_once("Skipping samples whose labels cannot be ranked: with k = the number "
                      "of relevant labels, a sample with no relevant or no irrelevant label "
                      "has the same loss under every ranking. The fitted n_skipped_queries_ "
                      "gives each fit's count. (Shown once per session; warnings."
                      "simplefilter('always', ssvm.exceptions.DegenerateQueriesWarning) "
                      "shows it at every fit.)", DegenerateQueriesWarning)
        if not keep.any():
            raise ValueError("no training sample has both relevant and irrelevant labels; "
                             "LabelRankSVM(k='relevant') has nothing to learn from.")
        return X[keep], Y[keep], k[keep]

    def _cccp(self, X, Y, k, layout, solver_params):
        """Solve for ``w`` (with a fixed ``k``, CCCP over the imputed target sets); ``(w, result)``."""
        w, T_star, result = None, Y, None
        self.n_iter_ = 0
        self.n_cccp_iter_ = 0
        while True:
            if self.k != "relevant":  # CCCP: impute the targets under the current w
                T_new = impute_targets(layout, w, X, Y, self.k)
                if w is not None and np.array_equal(T_new, T_star):
                    break
                if self.n_cccp_iter_ == self.max_cccp_iter:
                    warnings.warn(f"LabelRankSVM(k={self.k}): the imputed targets still changed "
                                  f"after max_cccp_iter={self.max_cccp_iter} rounds; increase "
                                  "it.", ConvergenceWarning, stacklevel=external_stacklevel())
                    break
                T_star = T_new
            previous = None if result is None else result.objective
            result = self._solve(LabelRankingHinge(X, Y, T_star, k, layout), w, solver_params)
            w = result.w
            self.n_cccp_iter_ += 1
            if self.k == "relevant" or (
                    previous is not None and previous - result.objective <= self.tol * previous):
                return w, result  # (CCCP: J decreases from round to round; stop when it stalls)
        return w, result

    def _resolve_core(self, Y):
        n_labels = Y.shape[1]
        if n_labels > 1 and self.n_core > min(MAX_CORE, n_labels):
            raise ValueError(
                f"n_core={self.n_core} is too large: it must be at most the number of labels "
                f"({n_labels}) and at most {MAX_CORE} (inference enumerates 2**n_core core "
                "states).")
        if isinstance(self.core, str):
            return select_core(Y, self.n_core)
        core = np.asarray(self.core)
        if core.ndim != 1 or not (core.size == 0 or np.issubdtype(core.dtype, np.integer)):
            raise ValueError(f"core must be 'mutual_information' or a 1-D list of label "
                             f"indices, got {self.core!r}")
        if core.size != self.n_core:
            raise ValueError(f"core lists {core.size} labels but n_core={self.n_core}; set "
                             "n_core to the number of core labels.")
        if core.size and (core.min() < 0 or core.max() >= n_labels
                          or np.unique(core).size != core.size):
            raise ValueError(f"core must hold distinct label indices in [0, {n_labels}), "
                             f"got {core.tolist()}")
        return core.astype(np.int64)

    def _solve(self, problem, w0, solver_params):
        result = run_solver(problem, self.solver, self.C, tol=self.tol, max_iter=self.max_iter,
                            w0=w0, random_state=self.random_state, verbose=self.verbose,
                            name="LabelRankSVM", solver_params=solver_params)
        self.n_iter_ += int(result.n_iter)
        if self.verbose:
            say(f"LabelRankSVM: J={result.objective:.6g} after {result.n_iter} iterations "
                f"(converged={result.converged}, inference {problem.oracle_seconds:.3f}s)")
        if not result.converged:
            warnings.warn(f"LabelRankSVM (solver={self.solver!r}) did not converge to "
                          f"tol={self.tol}; increase max_iter or tol.", ConvergenceWarning,
                          stacklevel=external_stacklevel())
        return result

    # ------------------------------------------------------------------ predict

    def _unary(self, X):
        S = X @ self.coef_.T
        return np.asarray(S, dtype=np.float64) + self.intercept_

    def _star(self):
        return self.core_, self.pairwise_[self.core_]

    def _validated_unary(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return self._unary(X)

    def _size_problem(self, S):
        """Unary scores and set size of the prediction problem (threshold or fixed k)."""
        if self.k == "relevant":
            return S - self.threshold_, -1
        return S, self.k

    def decision_function(self, X):
        """Per-label confidence: best score with the label in the predicted set minus without it.

        For the independent model (``n_core=0``) this is ``X @ coef_.T + intercept_ −
        threshold_`` with ``k="relevant"``, and a monotone transform of it for a fixed k; with
        pairwise terms it accounts for the labels' interactions. Positive exactly for the labels
        ``predict`` returns (up to ties).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_labels)
        """
        A, k = self._size_problem(self._validated_unary(X))
        _, _, vin, vout = star_inference(A, *self._star(), k, marginals=True)
        return vin - vout

    def predict(self, X):
        """The best label set of each sample: its top k labels (jointly) for an integer ``k``,
        otherwise the set maximising ``f(x, t) − threshold_·|t|``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of int, shape (n_samples, n_labels)
            Label indicator matrix.
        """
        A, k = self._size_problem(self._validated_unary(X))
        T, _ = star_inference(A, *self._star(), k)
        return T.astype(np.int64)

    def score(self, X, Y):
        """Mean break-even precision: precision at k = each sample's number of relevant labels,
        of the best joint set of that size. Samples without a relevant label are left out.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)

        Returns
        -------
        float
            NaN, with a warning, when no sample has a relevant label.
        """
        S, Y = self._check_scoring_data(X, Y)
        keep = Y.any(axis=1)
        if not keep.any():
            warnings.warn("break-even precision is undefined: no sample has a relevant label; "
                          "returning nan.", UserWarning, stacklevel=external_stacklevel())
            return float("nan")
        return float(break_even_precision(S[keep], *self._star(), Y[keep]).mean())

    def interactive_bep(self, X, Y, questions=(0, 1, 5, 10)):
        """Mean break-even precision after asking a user about 0, 1, 5, 10, ... labels per sample.

        The paper's interactive labelling (Table 1): each question reveals, from ``Y``, the label
        whose best in-set and out-of-set scores differ least, and inference is re-run with it
        fixed (:func:`ssvm.label_ranking.interactive_bep`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            True labels, the user's answers.
        questions : sequence of int, default=(0, 1, 5, 10)

        Returns
        -------
        ndarray of float64, shape (len(questions),)
        """
        S, Y = self._check_scoring_data(X, Y)
        if not Y.any():
            raise ValueError("interactive_bep needs samples with a relevant label")
        return interactive_bep(S, *self._star(), Y, questions)

    def _check_scoring_data(self, X, Y):
        S = self._validated_unary(X)
        Y = _check_indicator(Y.toarray() if sp.issparse(Y) else np.asarray(Y))
        if Y.shape != S.shape:
            raise ValueError(f"Y must have shape {S.shape} (one row per sample of X, one column "
                             f"per label), got {Y.shape}")
        return S, Y


def _check_indicator(Y):
    """Y as a bool (n, L) matrix; ValueError unless it is a 0/1 matrix with L >= 2."""
    if sp.issparse(Y):
        Y = Y.toarray()
    Y = np.asarray(Y)
    if Y.ndim != 2 or Y.shape[1] < 2:
        raise ValueError(f"Y must be a label indicator matrix of shape (n_samples, n_labels) with "
                         f"at least two labels, got shape {Y.shape}; for a list of label sets "
                         "use sklearn.preprocessing.MultiLabelBinarizer.")
    if Y.dtype != bool:
        if not np.all((Y == 0) | (Y == 1)):
            raise ValueError("Y must be binary (0/1 or bool): a label indicator matrix; got "
                             f"values {np.unique(Y)[:5].tolist()}.")
        Y = Y.astype(bool)
    return Y

