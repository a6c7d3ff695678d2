"""Where the transcript of a real UDK-era server lies: beside the repository, not in it.

The shared specification's fixtures (``shared/spec/fixtures``) sit next to the checkout or next to one of
the directories above it; tests that read them skip where there are none (e.g. in a user's clone).
"""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
UDK_SAMPLE = "usarsim-udk-sample.txt"


def fixture(name: str) -> Path | None:
    """The first ``shared/spec/fixtures/<name>`` beside the repository root or above it, else None."""
    for folder in (REPO, *REPO.parents):
        candidate = folder / "shared" / "spec" / "fixtures" / name
        if candidate.is_file():
            return candidate
    return None
