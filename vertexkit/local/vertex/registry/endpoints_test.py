from __future__ import annotations

import pytest

from vertexkit.local.errors import ApiError
from vertexkit.local.vertex.registry.endpoints import check_split


def test_split_must_sum_to_100() -> None:
    check_split({"1": 80, "0": 20}, ["1", "0"], "e")
    check_split({}, ["1"], "e")  # empty: the endpoint's split is left as it is
    with pytest.raises(ApiError, match="sum to 110"):
        check_split({"1": 80, "0": 30}, ["1", "0"], "e")


def test_split_keys_must_be_deployed_models() -> None:
    with pytest.raises(ApiError, match="'9' is not a deployed model"):
        check_split({"9": 100}, ["1", "0"], "e")


def test_split_percentages_are_bounded() -> None:
    with pytest.raises(ApiError, match=r"0\.\.100"):
        check_split({"1": 120, "0": -20}, ["1", "0"], "e")
