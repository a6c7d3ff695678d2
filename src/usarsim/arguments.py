"""Command-line argument types and a parser whose errors are one line."""
from __future__ import annotations

import argparse
import math
from typing import NoReturn


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser that reports a bad argument in one line (usage stays behind --help)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def whole_number(text: str) -> int:
    """Any integer of a sensible size."""
    text = text.strip()
    if len(text) > 19 or not text.lstrip("+-").isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text[:40]!r}")
    return int(text)


def positive_int(text: str) -> int:
    """An integer >= 1."""
    value = whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text[:40]!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text[:40]!r}")
    return value
