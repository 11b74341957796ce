"""Fixtures shared by the detection tests."""

import pytest


@pytest.fixture(scope="session")
def cv2():
    """OpenCV with the contrib modules (``cv2.ximgproc``), or skip the test that needs it."""
    module = pytest.importorskip("cv2")
    if not hasattr(module, "ximgproc"):
        pytest.skip("OpenCV contrib (cv2.ximgproc) is not installed")
    return module
