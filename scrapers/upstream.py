"""Files of public repositories at a pinned commit: the raw URL a live run fetches, the recording a replay serves,
and the blob URL each offer cites. Shared by the clients that read other projects' catalogs (AWS, Google Cloud,
CoreWeave); moving to a newer commit is a change to the client's module, as for SkyPilot's catalogs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

RECORDED = Path(__file__).resolve().parent / "recorded"


@dataclass(frozen=True, slots=True)
class UpstreamFile:
    repo: str  # owner/name on GitHub
    commit: str  # 40 hex digits
    path: str  # inside the repository
    recorded_name: str  # the file under scrapers/recorded/<folder>/

    @property
    def raw_url(self) -> str:
        return f"https://raw.githubusercontent.com/{self.repo}/{self.commit}/{self.path}"

    @property
    def blob_url(self) -> str:
        return f"https://github.com/{self.repo}/blob/{self.commit}/{self.path}"

    def recorded(self, folder: str) -> Path:
        return RECORDED / folder / self.recorded_name


GITHUB_API = "https://api.github.com"


def commit_api_url(repo: str, commit: str) -> str:
    """GitHub's REST "Get a commit" (GET /repos/{owner}/{repo}/commits/{ref},
    https://docs.github.com/en/rest/commits/commits#get-a-commit)."""
    return f"{GITHUB_API}/repos/{repo}/commits/{commit}"


def commit_date(http, repo: str, commit: str) -> datetime:
    """When `commit` of `repo` was committed (`commit.committer.date`, ISO 8601 in UTC), read from GitHub's REST API:
    for a file pinned at a commit that states no date of its own, the date its data holds. Raises a ScrapeError when
    GitHub does not answer (or limits the rate: 60 requests an hour without a token) and SchemaScrapeError when the
    answer is not a commit."""
    from .base import SchemaScrapeError
    from .http import get_json

    url = commit_api_url(repo, commit)
    data = get_json(http, url, headers={"Accept": "application/vnd.github+json"})
    try:
        text = data["commit"]["committer"]["date"]
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise SchemaScrapeError(f"{url}: no commit.committer.date in the answer") from exc
    if when.tzinfo is None:
        raise SchemaScrapeError(f"{url}: commit.committer.date {text!r} has no time zone")
    return when.astimezone(UTC)
