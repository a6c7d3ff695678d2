"""The fenced code blocks of a documentation page, for tests that run a page as it is written."""
from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def code_blocks(page: str, language: str) -> list[str]:
    """The blocks of docs/``page`` fenced as ``language`` (```python, ```sh), in page order."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return [body for lang, body in _FENCE.findall(text) if lang == language]


def program(page: str, filename: str) -> str:
    """The python block of docs/``page`` whose first line is ``# <filename>: ...``."""
    found = [b for b in code_blocks(page, "python") if b.startswith(f"# {filename}")]
    assert len(found) == 1, f"docs/{page} has {len(found)} programs named {filename}"
    return found[0]


def commands(page: str, program_name: str) -> list[list[str]]:
    """The lines of docs/``page``'s sh blocks that run ``program_name``, split as a shell would."""
    import shlex

    lines = [line for block in code_blocks(page, "sh") for line in block.splitlines()]
    return [shlex.split(line) for line in lines if line.split(" ", 1)[0] == program_name]
