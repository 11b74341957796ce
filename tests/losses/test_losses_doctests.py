"""The examples in the docstrings of ssvm.losses run and give the printed results."""

import doctest

import ssvm.losses.registry


def test_registry_doctests():
    result = doctest.testmod(ssvm.losses.registry, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
