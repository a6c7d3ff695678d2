"""Command-line argument types and a parser whose errors are one line."""
from __future__ import annotations

import argparse
import math
import re
from typing import NoReturn


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser that reports a bad argument in one line (usage stays behind --help)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


MAX_DIGITS = 19  # any 64-bit integer
SEED_MAX = 2**32 - 1  # the sensors' noise streams are seeded with 32 bits of the seed (sim/noise.py)


def _integer(text: str) -> int:
    """The integer ``text`` spells (sign, digits), however long; ArgumentTypeError otherwise."""
    text = text.strip()
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text[:40]!r}")
    digits = len(text.lstrip("+-").lstrip("0"))
    if digits > 1000:  # far beyond any limit; int() would refuse past 4300 digits anyway
        raise argparse.ArgumentTypeError(f"a number of {digits} digits is too large")
    return int(text)


def _shown(value: int) -> str:
    digits = str(abs(value))
    return ("-" if value < 0 else "") + (digits if len(digits) <= 24 else f"{digits[:12]}...({len(digits)} digits)")


def whole_number(text: str) -> int:
    """Any integer of a sensible size (at most MAX_DIGITS digits)."""
    value = _integer(text)
    if len(str(abs(value))) > MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"{_shown(value)} is too large: at most {MAX_DIGITS} digits")
    return value


def seed_number(text: str) -> int:
    """A random seed: a whole number from 0 to SEED_MAX, so that different seeds give different noise."""
    value = _integer(text)
    if not 0 <= value <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"a seed is a whole number from 0 to {SEED_MAX} (the noise streams "
                                         f"take 32 bits of it), got {_shown(value)}")
    return value


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
