"""latent_C_path: every C fitted by CCCP from the previous C's model, in the order of Cs."""

import numpy as np
import pytest

from ssvm import LatentRankSVM
from ssvm.latent import latent_C_path


def make_bags(seed, n_images=20, d=5, max_windows=8):
    """Positive images hide one window shifted along a direction among noise windows."""
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=d)
    bags, y = [], np.arange(n_images) % 2 == 0
    for label in y:
        bag = rng.normal(size=(int(rng.integers(1, max_windows + 1)), d))
        if label:
            bag[rng.integers(len(bag))] += 1.5 * direction
        bags.append(bag)
    return bags, y


@pytest.mark.parametrize("loss", ["ap", "zero_one"])
def test_each_C_starts_from_the_previous_C_and_the_first_is_a_cold_fit(loss):
    bags, y = make_bags(0)
    Cs = [10.0, 0.1, 1.0]  # the path runs 0.1, 1, 10; the result keeps this order
    template = LatentRankSVM(loss=loss, max_cccp_iter=10, tol=1e-6)
    models = latent_C_path(template, Cs, bags, y)
    assert [m.C for m in models] == Cs and not hasattr(template, "coef_")
    cold = LatentRankSVM(loss=loss, C=0.1, max_cccp_iter=10, tol=1e-6).fit(bags, y)
    np.testing.assert_array_equal(models[1].coef_, cold.coef_)
    for previous, model in ((models[1], models[2]), (models[2], models[0])):
        # J of the new C at the previous C's weights (and the imputation they imply) is where
        # the new CCCP starts, so its first history entry is the previous model's objective
        start = LatentRankSVM(loss=loss, C=model.C, init=_weights(previous), max_cccp_iter=1,
                              tol=1e-6).fit(bags, y)
        assert model.history_[0] == pytest.approx(start.history_[0], rel=1e-9)
        assert model.history_[-1] <= model.history_[0] * (1 + 1e-6)  # CCCP descends


def _weights(model):
    """The model's w as ``init`` takes it (with the learnt intercept last for zero_one)."""
    return np.append(model.coef_, model.intercept_) if model.loss == "zero_one" else model.coef_


def test_bad_input():
    bags, y = make_bags(1)
    with pytest.raises(ValueError, match="Cs"):
        latent_C_path(LatentRankSVM(), [], bags, y)
    with pytest.raises(ValueError, match="positive"):
        latent_C_path(LatentRankSVM(), [1.0, -1.0], bags, y)
    with pytest.raises(ValueError, match="checkpoint"):
        latent_C_path(LatentRankSVM(checkpoint="x.npz"), [1.0], bags, y)
