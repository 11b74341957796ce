"""ssvm.nn: the PyTorch loss layers give the score-space functions' values and gradients, pass
gradcheck where the loss is differentiable, keep dtype and device, and reject bad input clearly."""

import copy
import doctest

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ssvm.nn  # noqa: E402
from ssvm.losses import direct_loss_gradient, rank_hinge  # noqa: E402
from ssvm.nn import DirectRankLoss, RankHingeLoss  # noqa: E402

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _batch(seed, n=60, n_queries=3, dtype=torch.float64, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(n, generator=g, dtype=torch.float64).to(device=device, dtype=dtype)
    target = (torch.rand(n, generator=g) < 0.3).to(device)
    qid = torch.randint(0, n_queries, (n,), generator=g).to(device)
    target[:n_queries] = True
    target[n_queries:2 * n_queries] = False
    qid[:n_queries] = qid[n_queries:2 * n_queries] = torch.arange(n_queries)
    return scores, target, qid


def _grad(module, scores, target, qid=None):
    x = scores.detach().clone().requires_grad_(True)
    value = module(x, target, qid)
    value.backward()
    return value, x.grad


@pytest.mark.parametrize("loss", ["ap", "ndcg", "zero_one", "precision_at_k"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("device", DEVICES)
def test_rank_hinge_loss_is_rank_hinge(loss, dtype, device):
    scores, target, qid = _batch(0, dtype=dtype, device=device)
    value, grad = _grad(RankHingeLoss(loss), scores, target, qid)
    ref_value, ref_grad = rank_hinge(scores.cpu().numpy(), target.cpu().numpy(), qid.cpu().numpy(), loss=loss)
    assert value.dtype == dtype and value.device == scores.device and value.ndim == 0
    assert grad.dtype == dtype and grad.device == scores.device
    assert value.item() == pytest.approx(ref_value, rel=1e-6 if dtype == torch.float32 else 1e-12)
    np.testing.assert_array_equal(grad.cpu().numpy(), ref_grad)


@pytest.mark.parametrize("loss,direction", [("ap", "positive"), ("ap", "negative"), ("ap", "perceptron"),
                                            ("ndcg", "positive"), ("zero_one", "positive"),
                                            ("zero_one", "negative")])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_direct_rank_loss_is_direct_loss_gradient(loss, direction, dtype):
    scores, target, qid = _batch(1, dtype=dtype)
    value, grad = _grad(DirectRankLoss(loss, epsilon=0.3, direction=direction), scores, target, qid)
    ref_task, ref_grad = direct_loss_gradient(scores.numpy(), target.numpy(), qid.numpy(), loss=loss,
                                              epsilon=0.3, direction=direction)
    assert value.dtype == dtype and grad.dtype == dtype
    assert value.item() == pytest.approx(ref_task, rel=1e-6)
    np.testing.assert_array_equal(grad.numpy(), ref_grad)
    assert np.abs(ref_grad).max() > 0  # the batch is not trivially ranked


@pytest.mark.parametrize("direction", ["positive", "perceptron"])
def test_direct_rank_loss_takes_a_user_loss_object(direction):
    from ssvm.losses import APLoss

    scores, target, qid = _batch(1, dtype=torch.float64)
    user = DirectRankLoss(type("SubAP", (APLoss,), {})(), epsilon=0.3, direction=direction)
    value, grad = _grad(user, scores, target, qid)
    ref_value, ref_grad = _grad(DirectRankLoss("ap", epsilon=0.3, direction=direction), scores, target, qid)
    assert value.item() == pytest.approx(ref_value.item(), abs=1e-12)
    np.testing.assert_allclose(grad.numpy(), ref_grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("loss", ["ap", "ndcg", "zero_one"])
def test_gradcheck_of_the_hinge(loss):
    """Random scores without ties sit where the hinge is linear, so the numerical Jacobian of the
    forward matches the backward."""
    module = RankHingeLoss(loss)
    for seed in range(5):
        scores, target, qid = _batch(seed + 10, n=25)
        x = scores.detach().clone().requires_grad_(True)
        assert torch.autograd.gradcheck(lambda s, t=target, q=qid: module(s, t, q), (x,), eps=1e-7, atol=1e-8)


def test_backward_scales_with_the_upstream_gradient_and_composes():
    scores, target, qid = _batch(2)
    module = RankHingeLoss("ap")
    _, g1 = _grad(module, scores, target, qid)
    x = scores.detach().clone().requires_grad_(True)
    (3.0 * module(x, target, qid) + module(x * 2.0, target, qid)).backward()
    torch.testing.assert_close(x.grad, 3.0 * g1 + 2.0 * _grad(module, 2.0 * scores, target, qid)[1])


def test_inputs_as_arrays_and_forward_without_grad():
    scores, target, qid = _batch(3)
    module = DirectRankLoss("ap")
    ref = module(scores, target, qid)
    assert not ref.requires_grad
    for t, q in ((target.numpy(), qid.numpy()), (target.tolist(), qid.tolist()), (target.int(), qid)):
        assert module(scores, t, q).item() == ref.item()


def test_half_precision_scores_get_a_half_precision_gradient():
    scores, target, qid = _batch(4)
    value, grad = _grad(RankHingeLoss("ap"), scores.to(torch.bfloat16), target, qid)
    assert value.dtype == grad.dtype == torch.bfloat16


def test_training_a_linear_ranker_raises_ap():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(400, 5, generator=g)
    target = (X @ torch.tensor([1.0, -2.0, 0.5, 0.0, 0.0]) + 0.3 * torch.randn(400, generator=g)) > 1.0
    model = torch.nn.Linear(5, 1)
    optimiser = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = {"hinge": RankHingeLoss("ap"), "direct": DirectRankLoss("ap", epsilon=0.1)}
    for name, loss in losses.items():
        torch.nn.init.zeros_(model.weight)
        torch.nn.init.zeros_(model.bias)
        model.weight.data[0, 4] = 1.0  # an irrelevant feature: AP near chance
        start = 1 - DirectRankLoss("ap")(model(X)[:, 0], target).item()
        for _ in range(100):
            optimiser.zero_grad()
            loss(model(X)[:, 0], target).backward()
            optimiser.step()
        end = 1 - DirectRankLoss("ap")(model(X)[:, 0], target).item()
        assert start < 0.5 and end > 0.9, (name, start, end)


def test_clear_errors():
    scores, target, qid = _batch(5)
    module = RankHingeLoss("ap")
    with pytest.raises(ValueError, match="NaN or infinite"):
        module(torch.full_like(scores, float("nan")), target)
    with pytest.raises(ValueError, match="1-D"):
        module(scores[:, None], target)
    with pytest.raises(ValueError, match=r"one relevance grade per row \(60\)"):
        module(scores, target[:-1])
    with pytest.raises(ValueError, match="qid has 59 entries"):
        module(scores, target, qid[:-1])
    with pytest.raises(ValueError, match="degenerate"):
        module(scores, torch.zeros_like(target))
    with pytest.raises(ValueError, match="floating-point"):
        module(torch.arange(60), target)
    for eps in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="epsilon"):
            DirectRankLoss("ap", epsilon=eps)
    with pytest.raises(ValueError, match="no 'negative' direction"):
        DirectRankLoss("ndcg", direction="negative")
    with pytest.raises(ValueError, match="unknown oracle"):
        RankHingeLoss("ap", oracle="fast")


def test_modules_copy_and_describe_themselves():
    module = DirectRankLoss("zero_one", epsilon=0.5, direction="negative")
    clone = copy.deepcopy(module)
    scores, target, _ = _batch(6)
    assert clone(scores, target).item() == module(scores, target).item()
    assert repr(module) == "DirectRankLoss(loss='zero_one', epsilon=0.5, direction='negative')"
    assert repr(RankHingeLoss("ndcg")) == "RankHingeLoss(loss='ndcg', oracle='auto')"


def test_docstring_examples():
    result = doctest.testmod(ssvm.nn, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
