"""Helpers shared by ``ssvm demo`` (:mod:`ssvm.demo`) and the experiment scripts under ``scripts/``.

They live inside the package, not under ``scripts/``, because the installed ``ssvm demo`` needs
them and cannot import ``scripts/``. Private: import from the modules, which are named for what
they hold:

* :mod:`~ssvm._experiments.tables`: plain-text tables (:func:`format_table`);
* :mod:`~ssvm._experiments.model_selection`: the compared models, fitting, evaluating them
  (mean AP / NDCG with :mod:`ssvm.metrics`), C by cross-validation;
* :mod:`~ssvm._experiments.oracle_timing`: recording the oracle inputs met in training and timing
  every oracle on them;
* :mod:`~ssvm._experiments.plots`: precision-recall and convergence figures (matplotlib is
  imported only inside the plot functions).
"""
