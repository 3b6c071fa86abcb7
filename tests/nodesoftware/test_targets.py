"""Issue #38's data targets, measured on the shipped data files (nodesoftware/data/node_images.toml and stacks.toml):

- first-party dated driver history (release rows with a date) for >= 5 managed Kubernetes services;
- training-stack answers for >= 15 providers, >= 10 of them provider-managed or provider-documented, each sourced;
- Kubernetes versions with end-of-support dates for every managed service in the matrix that publishes them.

All are met (OKE's became the fifth dated history on 2026-12-05); a target the data stops reaching fails here,
and the floors below hold what is recorded today, so a lost service or provider fails."""

from nodesoftware import images, stacks

DATED_SERVICES_TARGET = 5
STACK_PROVIDERS_TARGET = 15
COUNTED_STACK_PROVIDERS_TARGET = 10


def services_with_dated_history() -> set[str]:
    return {service.slug for service in images.services()
            if any(release.since for image in service.images for release in image.releases)}


def providers_with_stack_answers(statuses=None) -> set[str]:
    return {answer.provider for answer in stacks.stack_answers()
            if answer.source_url.startswith("https://") and (statuses is None or answer.status in statuses)}


def test_the_recorded_dated_histories_are_not_lost():
    assert {"eks", "aks", "gke", "ack", "oke"} <= services_with_dated_history()


def test_dated_driver_history_for_5_managed_services():
    assert len(services_with_dated_history()) >= DATED_SERVICES_TARGET, sorted(services_with_dated_history())


def test_stack_answers_for_15_providers():
    assert len(providers_with_stack_answers()) >= STACK_PROVIDERS_TARGET, sorted(providers_with_stack_answers())


def test_10_providers_have_a_provider_managed_or_documented_stack():
    counted = providers_with_stack_answers(stacks.COUNTED)
    assert len(counted) >= COUNTED_STACK_PROVIDERS_TARGET, sorted(counted)


# Services whose providers publish no Kubernetes support dates we could record (nodesoftware/data/README.md).
PUBLISH_NO_DATES = {"cks", "nebius-mk8s"}


def test_every_managed_service_that_publishes_support_dates_has_its_calendar():
    without = {service.slug for service in images.services() if not service.kubernetes}
    assert without == PUBLISH_NO_DATES
    for service in images.services():
        if service.kubernetes:
            assert service.calendar_url.startswith("https://"), service.slug
            assert any(release.standard_end for release in service.kubernetes), service.slug
