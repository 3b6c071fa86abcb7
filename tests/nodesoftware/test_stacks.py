"""Training stacks: strict loader, statuses, and the family the `stack` filter asks for."""

import tomllib
from pathlib import Path

import pytest

from nodesoftware import stacks

PROVIDERS = {path.stem for path in (Path(stacks.__file__).parent.parent / "providers" / "data" / "providers")
             .glob("*.toml")}


def test_every_row_names_a_curated_provider_and_a_source():
    answers = stacks.parse_stacks(tomllib.loads(stacks.STACKS_PATH.read_text()), providers=PROVIDERS)
    assert all(answer.source_url.startswith("https://") for answer in answers)


def test_slurm_family_gathers_sunk_soperator_slinky_and_provider_slurm():
    assert {"coreweave", "nebius", "crusoe", "gcp", "together"} <= stacks.providers_with("slurm")
    assert "huawei" not in stacks.providers_with("slurm")  # Volcano only


def test_a_community_answer_does_not_count_for_the_filter():
    data = {"verified_on": stacks.stack_answers()[0].verified_on, "provider": [
        {"slug": "aws", "stack": [{"stack": "volcano", "status": "community", "detail": "a blog",
                                   "source_url": "https://example.org"}]}]}
    [answer] = stacks.parse_stacks(data)
    assert answer.status not in stacks.COUNTED


@pytest.mark.parametrize("row, message", [
    ({"stack": "pbs", "status": "provider-managed", "detail": "x", "source_url": "https://x"}, "stack must be"),
    ({"stack": "kueue", "status": "maybe", "detail": "x", "source_url": "https://x"}, "status must be"),
    ({"stack": "kueue", "status": "unknown", "detail": "x", "source_url": "https://x"}, "leave unknown out"),
    ({"stack": "kueue", "status": "community", "detail": "x", "source_url": "http://x"}, "https source_url"),
])
def test_the_loader_refuses_bad_rows(row, message):
    data = {"verified_on": stacks.stack_answers()[0].verified_on, "provider": [{"slug": "aws", "stack": [row]}]}
    with pytest.raises(stacks.StackDataError, match=message):
        stacks.parse_stacks(data)
