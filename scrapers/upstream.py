"""Files of public repositories at a pinned commit: the raw URL a live run fetches, the recording a replay serves,
and the blob URL each offer cites. Shared by the clients that read other projects' catalogs (AWS, Google Cloud,
CoreWeave); moving to a newer commit is a change to the client's module, as for SkyPilot's catalogs."""

from __future__ import annotations

from dataclasses import dataclass
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
