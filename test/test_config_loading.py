"""The strict YAML loader: unknown keys, missing fields and wrong types name file, line and key."""
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from usarsim.config_loading import ConfigError, load_dataclass


@dataclass
class Inner:
    size: tuple[float, float, float]
    name: str = "x"


@dataclass
class Outer:
    title: str
    count: int
    items: list[Inner] = field(default_factory=list)
    flag: bool = False


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "thing.yaml"
    path.write_text(text)
    return path


def test_loads_nested(tmp_path):
    obj = load_dataclass(Outer, write(tmp_path, "title: a\ncount: 3\nitems:\n  - {size: [1, 2, 3]}\n"))
    assert obj.items[0].size == (1.0, 2.0, 3.0) and obj.count == 3


def test_unknown_key_names_file_line_and_known_keys(tmp_path):
    path = write(tmp_path, "title: a\ncount: 3\ncuont: 4\n")
    with pytest.raises(ConfigError, match=r"thing.yaml:3: unknown key 'cuont'.*known: count, flag, items, title"):
        load_dataclass(Outer, path)


def test_missing_field(tmp_path):
    with pytest.raises(ConfigError, match="missing required key 'count'"):
        load_dataclass(Outer, write(tmp_path, "title: a\n"))


@pytest.mark.parametrize("text, message", [
    ("title: a\ncount: many\n", r":2: Outer.count must be an integer"),
    ("title: a\ncount: 1\nflag: 3\n", r":3: Outer.flag must be true or false"),
    ("title: a\ncount: 1\nitems:\n  - {size: [1, 2]}\n", r"must have 3 elements"),
    ("title: a\ncount: 1\nitems:\n  - {size: [1, .nan, 2]}\n", r"must be finite"),
    ("title: [a\n", r"YAML syntax error"),
    ("", r"file is empty"),
])
def test_bad_values(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_dataclass(Outer, write(tmp_path, text))


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read file"):
        load_dataclass(Outer, tmp_path / "nope.yaml")
