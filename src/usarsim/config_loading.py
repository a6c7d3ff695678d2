"""Strict YAML -> dataclass loading with file/line/key error messages.

World files and robot catalogue entries are user-edited; a typo must be
reported as ``file:line: unknown key 'wheel_radus' in drive (known: ...)``
rather than silently ignored or surfacing later as an AttributeError.
"""
from __future__ import annotations

import dataclasses
import math
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


def load_yaml_node(path: Path) -> yaml.Node:
    """Parse ``path`` into a YAML node tree (keeps line numbers)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read file: {exc.strerror}") from exc
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{line}: YAML syntax error: {getattr(exc, 'problem', exc)}") from exc
    if node is None:
        raise ConfigError(f"{path}: file is empty")
    return node


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
    if dataclasses.is_dataclass(tp):
        return _convert_dataclass(tp, node, source, context)
    if origin in (list, typing.List):
        (item_tp,) = get_args(tp) or (Any,)
        seq = _expect(node, yaml.SequenceNode, "a list", source, context)
        return [convert_node(item_tp, item, source, f"{context}[{i}]") for i, item in enumerate(seq.value)]
    if origin in (tuple, typing.Tuple):
        args = get_args(tp)
        seq = _expect(node, yaml.SequenceNode, "a list", source, context)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(convert_node(args[0], item, source, f"{context}[{i}]") for i, item in enumerate(seq.value))
        if len(seq.value) != len(args):
            raise ConfigError(f"{_where(source, node)}: {context} must have {len(args)} elements, got {len(seq.value)}")
        return tuple(convert_node(a, item, source, f"{context}[{i}]") for i, (a, item) in enumerate(zip(args, seq.value)))
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
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_object(node, deep=True)
    finally:
        loader.dispose()


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


def _convert_dataclass(cls: type, node: yaml.Node, source: str, context: str) -> Any:
    mapping = _expect(node, yaml.MappingNode, "a mapping", source, context)
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
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
