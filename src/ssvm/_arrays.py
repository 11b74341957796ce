"""What kind of array a caller handed over, asked in one place."""

import sys

__all__ = ["is_dask_array"]


def is_dask_array(X):
    """Whether ``X`` is a dask array (dask is not imported here: a dask array means it was).

    Parameters
    ----------
    X : object

    Returns
    -------
    bool
    """
    dask_array = sys.modules.get("dask.array")
    return dask_array is not None and isinstance(X, dask_array.Array)
