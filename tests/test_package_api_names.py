"""``import foxhunt`` names the API lazily (PEP 562): each of ``Forecaster``, ``TFTForecaster``
and ``read_bars`` is the object :mod:`foxhunt.api` holds, and any other name is the usual
AttributeError, worded as Python words it."""

from __future__ import annotations

import pytest

import foxhunt


@pytest.mark.parametrize("name", ["Forecaster", "TFTForecaster", "read_bars"])
def test_each_api_name_is_the_object_foxhunt_api_holds(name: str) -> None:
    from foxhunt import api

    assert getattr(foxhunt, name) is getattr(api, name)
    assert name in foxhunt.__all__


def test_the_names_reach_their_defining_modules() -> None:
    from foxhunt.api.forecaster import TFTForecaster
    from foxhunt.infer.forecaster import Forecaster

    assert foxhunt.Forecaster is Forecaster
    assert foxhunt.TFTForecaster is TFTForecaster
    assert foxhunt.read_bars.__module__ == "foxhunt.api"
    assert foxhunt.read_bars.__name__ == "read_bars"


def test_every_name_of_all_resolves() -> None:
    assert sorted(foxhunt.__all__) == ["Forecaster", "TFTForecaster", "__version__", "read_bars"]
    for name in foxhunt.__all__:
        assert getattr(foxhunt, name) is not None


def test_an_unknown_name_is_an_attribute_error_worded_as_python_words_it() -> None:
    with pytest.raises(AttributeError, match=r"^module 'foxhunt' has no attribute 'nope'$"):
        foxhunt.nope  # noqa: B018
    with pytest.raises(AttributeError) as refused:
        foxhunt.forecaster  # noqa: B018 (names are case-sensitive)
    assert str(refused.value) == "module 'foxhunt' has no attribute 'forecaster'"
    assert not hasattr(foxhunt, "nope")
    assert getattr(foxhunt, "nope", "default") == "default"
