"""Request body caps and the admin login throttle (comparator.security, comparator.admin)."""

import pytest
from django.contrib.auth.models import User

pytestmark = pytest.mark.django_db


def test_a_body_over_the_cap_is_a_413_before_it_is_parsed(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    body = '{"gpus": 1, "pad": "' + "x" * 2000 + '"}'
    response = client.post("/api/v1/advise/", body, content_type="application/json")
    assert response.status_code == 413 and "at most 1024" in response.json()["detail"]
    assert client.post("/api/v1/advise/", "{}", content_type="application/json").status_code != 413


def test_admin_login_is_throttled_per_client_and_per_username(client, settings):
    settings.ADMIN_LOGIN_ATTEMPTS = 3
    User.objects.create_superuser("root", "root@example.org", "right-password")
    for _ in range(3):
        response = client.post("/admin/login/", {"username": "root", "password": "wrong"})
        assert response.status_code == 200  # the form again, with its error
    blocked = client.post("/admin/login/", {"username": "root", "password": "right-password"})
    assert blocked.status_code == 429 and int(blocked["Retry-After"]) > 0
    # another client guessing the same account is held too
    other = client.post("/admin/login/", {"username": "root", "password": "x"}, REMOTE_ADDR="198.51.100.4")
    assert other.status_code == 429
    # a fresh client and username still get the form
    assert client.post("/admin/login/", {"username": "ann", "password": "x"},
                       REMOTE_ADDR="198.51.100.5").status_code == 200


@pytest.mark.parametrize("path", ["/api/v1/offers/?page=２", "/api/v1/offers/?price_per_gpu_hour_max=1.５",
                                  "/api/v1/offers/?gpu_count_min=٣"])
def test_fullwidth_and_other_non_ascii_digits_are_refused_as_numbers_by_the_api(client, path):
    response = client.get(path)
    assert response.status_code == 400
    name = path.split("?")[1].split("=")[0]
    assert name in response.json()


@pytest.mark.parametrize(("path", "ascii_path"), [
    ("/?price_per_gpu_hour_max=３", "/?price_per_gpu_hour_max=3"),
    ("/?gpu_count_min=８&search=Ｈ１００&price_per_gpu_hour_max=１．５",
     "/?gpu_count_min=8&search=%EF%BC%A8%EF%BC%91%EF%BC%90%EF%BC%90&price_per_gpu_hour_max=1.5"),
    ("/charts/?gpu_count_min=٣", "/charts/?gpu_count_min=3"),
])
def test_a_page_asked_for_a_number_in_other_digits_redirects_to_ascii_digits(client, path, ascii_path):
    """A number typed with a Chinese input method is fullwidth: the page answers with the same query in ASCII digits
    (text that is not a number, like the search 'Ｈ１００', is left as typed), and that page filters by it."""
    response = client.get(path)
    assert response.status_code == 302 and response["Location"] == ascii_path
    assert client.get(ascii_path).status_code != 400


def test_text_with_fullwidth_digits_is_not_a_number_and_ascii_numbers_pass(client):
    from django.http import QueryDict

    from comparator.security import non_ascii_number

    assert non_ascii_number(QueryDict("q=Ｈ１００&price_per_gpu_hour_max=3.50&page=2")) is None
    assert non_ascii_number(QueryDict("gpu_count_min=８")) == "gpu_count_min"
    assert client.get("/api/v1/offers/?page=1").status_code == 200
