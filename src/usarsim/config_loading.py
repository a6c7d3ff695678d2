"""Strict YAML -> dataclass loading with file/line/key error messages.

World files and robot catalogue entries are user-edited; a typo must be
reported as ``file:line: unknown key 'wheel_radus' in drive (known: ...)``
rather than silently ignored or surfacing later as an AttributeError.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import os
import re
import types
import typing
from pathlib import Path
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

import yaml

T = TypeVar("T")


class ConfigError(ValueError):
    """A configuration file is malformed; the message names file, line and key."""


def _where(source: str, node: yaml.Node | None) -> str:
    if node is None:
        return source
    return f"{source}:{node.start_mark.line + 1}"


MAX_FILE_BYTES = 16 << 20  # a world or robot file is text of a few kB; refuse to read a disk image
# Values a file may hold once YAML aliases are expanded: a few kB of anchors and aliases can
# otherwise stand for 10^8 values (an "alias bomb") that conversion would walk one by one.
MAX_VALUES = 2_000_000
_PLAIN_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "seq", "map", "merge"))


_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when PyYAML has it: 20x faster


class ConfigLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """PyYAML's safe loader, except that numbers in exponent form (``1e9``, ``1.0e9``, ``2E-3``) are
    numbers, as in YAML 1.2; PyYAML follows YAML 1.1, which wants a dot and a signed exponent."""


ConfigLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."))


def load_yaml_node(path: Path) -> yaml.Node:
    """Parse ``path`` into a YAML node tree (keeps line numbers); only plain YAML, no language tags."""
    try:
        with open(path, "rb") as stream:
            data = stream.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read file: {exc.strerror}") from exc
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB; not a world or robot file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not a UTF-8 text file (byte {data[exc.start]:#04x})") from None
    if "\x00" in text:
        raise ConfigError(f"{path}:{text[:text.index(chr(0))].count(chr(10)) + 1}: not a text file (NUL byte)")
    try:
        node = yaml.compose(text, Loader=ConfigLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{where}: YAML syntax error: {getattr(exc, 'problem', exc)}") from exc
    except RecursionError:
        raise ConfigError(f"{path}: lists or mappings nested too deeply") from None
    if node is None:
        raise ConfigError(f"{path}: file is empty")
    _reject_tags(node, str(path))
    _check_expanded_size(node, str(path))
    return node


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def expanded_size(root: yaml.Node, source: str) -> int:
    """Number of values under ``root`` with every alias expanded (shared nodes counted once per use);
    a node that contains itself (``&a [*a]``) is refused."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if children_done:
            open_nodes.discard(id(node))
            sizes[id(node)] = min(1 + sum(sizes[id(c)] for c in children), MAX_VALUES + 1)
            continue
        if id(node) in open_nodes:
            raise ConfigError(f"{_where(source, node)}: a YAML alias refers to a value that contains it")
        open_nodes.add(id(node))
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes[id(root)]


def _check_expanded_size(root: yaml.Node, source: str) -> None:
    if expanded_size(root, source) <= MAX_VALUES:
        return
    pairs = root.value if isinstance(root, yaml.MappingNode) else []
    worst = max(pairs, key=lambda pair: expanded_size(pair[1], source), default=None)
    where = f"{_where(source, worst[0])}: {worst[0].value}" if worst else source
    raise ConfigError(f"{where}: more than {MAX_VALUES} values once YAML aliases (*name) are expanded; "
                      f"a world or robot file holds far fewer")


def _reject_tags(root: yaml.Node, source: str) -> None:
    """Refuse explicit non-standard tags (``!!python/...``, ``!custom``) anywhere in the tree."""
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:  # aliases share nodes
            continue
        seen.add(id(node))
        if node.tag not in _PLAIN_TAGS:
            tag = node.tag.replace("tag:yaml.org,2002:", "!!")
            raise ConfigError(f"{_where(source, node)}: YAML tag '{tag}' is not allowed (plain YAML only)")
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.extend((key, value))


def load_dataclass(cls: type[T], path: Path) -> T:
    """Load a YAML file into dataclass ``cls``, rejecting unknown keys and wrong types."""
    node = load_yaml_node(path)
    return convert_node(cls, node, str(path), cls.__name__)


def convert_node(tp: Any, node: yaml.Node, source: str, context: str) -> Any:
    """Convert a YAML node to type ``tp`` (dataclasses, lists, tuples, dicts, scalars)."""
    origin = get_origin(tp)
    if tp is Any:
        return _plain(node)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if _is_null(node):
            if len(args) < len(get_args(tp)):
                return None
            raise ConfigError(f"{_where(source, node)}: {context} must not be empty")
        errors = []
        for arg in args:
            try:
                return convert_node(arg, node, source, context)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if len(errors) == 1 else f"{_where(source, node)}: {context}: " + "; ".join(errors))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _convert_dataclass(tp, node, source, context)
    if origin in (list, typing.List):
        (item_tp,) = get_args(tp) or (Any,)
        seq = _expect(node, yaml.SequenceNode, "a list", source, context)
        return [convert_node(item_tp, item, source, f"{context}[{i}]") for i, item in enumerate(seq.value)]
    if origin in (tuple, typing.Tuple):
        item_types = get_args(tp)
        seq = _expect(node, yaml.SequenceNode, "a list", source, context)
        if len(item_types) == 2 and item_types[1] is Ellipsis:
            return tuple(convert_node(item_types[0], item, source, f"{context}[{i}]") for i, item in enumerate(seq.value))
        if len(seq.value) != len(item_types):
            raise ConfigError(f"{_where(source, node)}: {context} must have {len(item_types)} elements, got {len(seq.value)}")
        return tuple(convert_node(a, item, source, f"{context}[{i}]") for i, (a, item) in enumerate(zip(item_types, seq.value)))
    if origin in (dict, typing.Dict):
        key_tp, val_tp = get_args(tp) or (str, Any)
        mapping = _expect(node, yaml.MappingNode, "a mapping", source, context)
        result = {}
        for knode, vnode in mapping.value:
            key = convert_node(key_tp, knode, source, f"{context} key")
            result[key] = convert_node(val_tp, vnode, source, f"{context}.{key}")
        return result
    return _convert_scalar(tp, node, source, context)


def _plain(node: yaml.Node) -> Any:
    # a fresh constructor per value: it remembers what it built, and loads may run in several threads
    return yaml.constructor.SafeConstructor().construct_object(node, deep=True)


def _is_null(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def _expect(node: yaml.Node, kind: type, what: str, source: str, context: str) -> Any:
    if not isinstance(node, kind):
        raise ConfigError(f"{_where(source, node)}: {context} must be {what}")
    return node


_SCALAR_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}


def _convert_scalar(tp: Any, node: yaml.Node, source: str, context: str) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        raise ConfigError(f"{_where(source, node)}: {context} must be {_SCALAR_NAMES.get(tp, tp)}")
    value = _plain(node)
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{_where(source, node)}: {context} must be a number, got {node.value!r}")
        if not math.isfinite(value):
            raise ConfigError(f"{_where(source, node)}: {context} must be finite, got {node.value!r}")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{_where(source, node)}: {context} must be an integer, got {node.value!r}")
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{_where(source, node)}: {context} must be true or false, got {node.value!r}")
        return value
    if tp is str:
        if value is None or isinstance(value, (list, dict)):
            raise ConfigError(f"{_where(source, node)}: {context} must be a string")
        return str(node.value)
    if isinstance(tp, type) and issubclass(tp, typing.Hashable) and hasattr(tp, "__members__"):
        try:
            return tp(node.value)
        except ValueError:
            known = ", ".join(str(m.value) for m in tp)  # type: ignore[attr-defined]
            raise ConfigError(f"{_where(source, node)}: {context} must be one of {known}, got {node.value!r}") from None
    if get_origin(tp) is typing.Literal:
        allowed = get_args(tp)
        if value not in allowed:
            raise ConfigError(
                f"{_where(source, node)}: {context} must be one of {', '.join(map(str, allowed))}, got {node.value!r}")
        return value
    return value


@functools.cache
def _schema(cls: type) -> tuple[dict[str, Any], dict[str, dataclasses.Field]]:
    """Type hints and init fields of a dataclass (resolving the hints is slow: once per class)."""
    return get_type_hints(cls), {f.name: f for f in dataclasses.fields(cls) if f.init}


def _convert_dataclass(cls: type, node: yaml.Node, source: str, context: str) -> Any:
    mapping = _expect(node, yaml.MappingNode, "a mapping", source, context)
    hints, fields = _schema(cls)
    kwargs: dict[str, Any] = {}
    for knode, vnode in mapping.value:
        key = knode.value
        if key not in fields:
            known = ", ".join(sorted(fields))
            raise ConfigError(f"{_where(source, knode)}: unknown key '{key}' in {context} (known: {known})")
        if key in kwargs:
            raise ConfigError(f"{_where(source, knode)}: duplicate key '{key}' in {context}")
        kwargs[key] = convert_node(hints[key], vnode, source, f"{context}.{key}")
    for name, field in fields.items():
        if name not in kwargs and field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise ConfigError(f"{_where(source, node)}: missing required key '{name}' in {context}")
    try:
        obj = cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{_where(source, node)}: {context}: {exc}") from exc
    return obj


ASSET_PATH_VARIABLE = "USARSIM_ASSET_PATH"  # extra folders (os.pathsep-separated) files may name


def confined_path(base: Path, relative: str, source: str, key: str) -> Path:
    """``relative`` resolved against ``base``; it must stay inside ``base`` or a folder of $USARSIM_ASSET_PATH.

    Links and ``..`` are resolved first, so neither can lead out of the allowed folders.
    """
    if not relative or "\x00" in relative:
        raise ConfigError(f"{source}: {key}: empty or invalid path {relative!r}")
    allowed = [Path(base).resolve()]
    allowed += [Path(p).resolve() for p in os.environ.get(ASSET_PATH_VARIABLE, "").split(os.pathsep) if p]
    tried = [(folder / relative).resolve() for folder in allowed]  # an absolute path replaces the folder
    inside = [path for path in tried if any(path.is_relative_to(folder) for folder in allowed)]
    if inside:
        return next((path for path in inside if path.exists()), inside[0])
    raise ConfigError(f"{source}: {key}: '{relative}' leads outside the world's folder {allowed[0]} "
                      f"(other folders may be listed in ${ASSET_PATH_VARIABLE})")
