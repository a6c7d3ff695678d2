"""Crash-safe rosbag2 (MCAP) files: written in place, sealed chunk by chunk, repairable.

:class:`DurableBag` wraps the ``rosbags`` writer so that a recording stopped at any
moment keeps what it recorded:

- the bag is written where the user asked from the first message on (a single
  ``FILE.mcap`` is a hard link to the writer's file in a hidden staging folder beside
  it, so it exists while recording);
- every ``chunk_seconds`` of bag time (default 1 s) the open MCAP chunk is closed,
  written and fsync'ed, so after SIGKILL or a power loss at most that last chunk is lost;
- a normal close writes the summary, the index and ``metadata.yaml``.

:func:`repair` turns a file cut off by a crash (no summary, no footer, maybe a torn
last record) back into a complete bag: it reads every intact chunk and writes them
again through the same writer, so the standard readers (rosbags, ``ros2 bag``) open it.
"""
from __future__ import annotations

import logging
import os
import shutil
import struct
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from rosbags.rosbag2 import Writer

log = logging.getLogger(__name__)

DEFAULT_CHUNK_SECONDS = 1.0  # bag time per sealed chunk: the most a crash can lose
MCAP_MAGIC = b"\x89MCAP0\r\n"
_OP_SCHEMA, _OP_CHANNEL, _OP_MESSAGE, _OP_CHUNK, _OP_FOOTER, _OP_DATA_END = 0x03, 0x04, 0x05, 0x06, 0x02, 0x0F


class DurableBag:
    """A rosbag2 MCAP writer whose output survives the recorder being stopped or killed."""

    def __init__(self, output: str | Path, chunk_seconds: float = DEFAULT_CHUNK_SECONDS) -> None:
        if not chunk_seconds > 0:
            raise ValueError("chunk_seconds must be positive")
        self.output = Path(output)
        self.single_file = self.output.suffix == ".mcap"
        self.chunk_ns = int(chunk_seconds * 1e9)
        self._staging: Path | None = None
        self._writer: "Writer | None" = None
        self._chunk_start: int | None = None

    def open(self) -> "Writer":
        """Create the bag (the output path must not exist) and return the rosbags writer."""
        from rosbags.rosbag2 import StoragePlugin, Writer

        self.output.parent.mkdir(parents=True, exist_ok=True)
        if self.single_file:
            self._staging = Path(tempfile.mkdtemp(prefix=f".{self.output.stem}.", dir=self.output.parent))
            bag_dir = self._staging / self.output.stem
        else:
            bag_dir = self.output
        writer = Writer(bag_dir, version=Writer.VERSION_LATEST, storage_plugin=StoragePlugin.MCAP)
        writer.open()
        if self._staging is not None:
            os.link(bag_dir / f"{bag_dir.name}.mcap", self.output)  # the file is at its place while recording
        self._writer = writer
        return writer

    def wrote(self, stamp_ns: int) -> None:
        """Call after each write: seals the open chunk once it spans ``chunk_seconds`` of bag time."""
        if self._chunk_start is None:
            self._chunk_start = stamp_ns
        elif stamp_ns - self._chunk_start >= self.chunk_ns:
            self.seal()
            self._chunk_start = stamp_ns

    def seal(self) -> None:
        """Write the open chunk and its index records now and push them to the disk."""
        storage = getattr(self._writer, "storage", None)
        if storage is None:
            return
        if storage.chunk.bio.tell():  # rosbags' MCAP writer: an unwritten chunk is pending
            storage.close_chunk()
        storage.bio.flush()
        os.fsync(storage.bio.fileno())

    def close(self) -> None:
        """Finish the bag: last chunk, summary, index, metadata (``metadata.yaml`` for a directory)."""
        writer, self._writer = self._writer, None
        if writer is None:
            return
        writer.close()
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)  # the output link keeps the finished file
            self._staging = None

    def __enter__(self) -> "Writer":
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------- repair

@dataclass
class RepairReport:
    """What :func:`repair` recovered."""

    path: Path
    messages: int = 0
    chunks: int = 0
    dropped_bytes: int = 0  # the torn tail that could not be read
    topics: dict[str, int] = field(default_factory=dict)
    already_complete: bool = False


@dataclass
class _Schema:
    name: str
    encoding: str
    data: str


@dataclass
class _Channel:
    schema_id: int
    topic: str
    encoding: str
    metadata: bytes  # MCAP string map (key/value strings), as rosbags' QoS reader takes it


def _mcap_file(path: Path) -> Path:
    if path.is_dir():
        found = sorted(path.glob("*.mcap"))
        if len(found) != 1:
            raise ValueError(f"{path}: expected one .mcap file in the bag directory, found {len(found)}")
        return found[0]
    return path


def is_complete(path: str | Path) -> bool:
    """True when the MCAP file ends in a footer (it was closed properly)."""
    mcap = _mcap_file(Path(path))
    with open(mcap, "rb") as stream:
        stream.seek(0, os.SEEK_END)
        if stream.tell() < 2 * len(MCAP_MAGIC) + 37:
            return False
        stream.seek(-len(MCAP_MAGIC), os.SEEK_END)
        return stream.read() == MCAP_MAGIC


def _records(data: memoryview, start: int, end: int) -> Iterator[tuple[int, memoryview, int]]:
    """(opcode, body, end offset) of each complete record in ``data[start:end]``; stops at a torn one."""
    pos = start
    while pos + 9 <= end:
        op = data[pos]
        (length,) = struct.unpack_from("<Q", data, pos + 1)
        body_end = pos + 9 + length
        if body_end > end:
            return
        yield op, data[pos + 9:body_end], body_end
        pos = body_end


def _string(body: memoryview, pos: int) -> tuple[str, int]:
    (n,) = struct.unpack_from("<I", body, pos)
    return bytes(body[pos + 4:pos + 4 + n]).decode("utf-8"), pos + 4 + n


def _decompress(compression: str, data: memoryview, size: int) -> memoryview:
    if not compression:
        return data
    from rosbags.rosbag2.storage_mcap import DECOMPRESSORS

    if compression not in DECOMPRESSORS:
        raise ValueError(f"unsupported chunk compression {compression!r}")
    return memoryview(DECOMPRESSORS[compression](bytes(data), size))


def _scan(data: memoryview) -> tuple[dict[int, _Schema], dict[int, _Channel], list[tuple[int, int, bytes]], int, int]:
    """(schemas, channels, messages (channel, time, data), chunks, end of the last intact record)."""
    schemas: dict[int, _Schema] = {}
    channels: dict[int, _Channel] = {}
    messages: list[tuple[int, int, bytes]] = []
    chunks = 0
    good_end = len(MCAP_MAGIC)

    def take(op: int, body: memoryview) -> None:
        if op == _OP_SCHEMA:
            (sid,) = struct.unpack_from("<H", body, 0)
            name, pos = _string(body, 2)
            encoding, pos = _string(body, pos)
            (n,) = struct.unpack_from("<I", body, pos)
            schemas[sid] = _Schema(name, encoding, bytes(body[pos + 4:pos + 4 + n]).decode("utf-8"))
        elif op == _OP_CHANNEL:
            cid, sid = struct.unpack_from("<HH", body, 0)
            topic, pos = _string(body, 4)
            encoding, pos = _string(body, pos)
            (n,) = struct.unpack_from("<I", body, pos)
            channels[cid] = _Channel(sid, topic, encoding, bytes(body[pos + 4:pos + 4 + n]))
        elif op == _OP_MESSAGE:
            cid, _seq, log_time, _pub = struct.unpack_from("<HIQQ", body, 0)
            messages.append((cid, log_time, bytes(body[22:])))

    for op, body, end in _records(data, len(MCAP_MAGIC), len(data)):
        if op in (_OP_FOOTER, _OP_DATA_END):
            break
        if op == _OP_CHUNK:
            _start, _end, size, _crc = struct.unpack_from("<QQQI", body, 0)
            compression, pos = _string(body, 28)
            (n,) = struct.unpack_from("<Q", body, pos)
            inner = _decompress(compression, body[pos + 8:pos + 8 + n], size)
            for inner_op, inner_body, _ in _records(inner, 0, len(inner)):
                take(inner_op, inner_body)
            chunks += 1
        else:
            take(op, body)
        good_end = end
    return schemas, channels, messages, chunks, good_end


def repair(path: str | Path) -> RepairReport:
    """Rewrite a bag cut off by a crash as a complete one, in place (FILE.mcap or a rosbag2 directory)."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.rosbag2.storage_mcap import get_qos
    from rosbags.typesys import Stores, get_typestore, get_types_from_msg

    target = Path(path)
    mcap = _mcap_file(target)
    report = RepairReport(path=target)
    raw = mcap.read_bytes()
    if not raw.startswith(MCAP_MAGIC):
        raise ValueError(f"{mcap}: not an MCAP file")
    if is_complete(target):
        report.already_complete = True
        return report
    schemas, channels, messages, report.chunks, good_end = _scan(memoryview(raw))
    report.dropped_bytes = len(raw) - good_end
    typestore = get_typestore(Stores.ROS2_KILTED)

    staging = Path(tempfile.mkdtemp(prefix=f".{mcap.stem}.repair.", dir=mcap.parent))
    try:
        bag_dir = staging / mcap.stem
        with Writer(bag_dir, version=Writer.VERSION_LATEST, storage_plugin=StoragePlugin.MCAP) as writer:
            connections = {}
            for cid, channel in sorted(channels.items()):
                schema = schemas.get(channel.schema_id)
                if schema is None:
                    continue
                if schema.name not in typestore.types and schema.encoding == "ros2msg":
                    typestore.register(get_types_from_msg(schema.data, schema.name))
                if schema.name not in typestore.types:
                    log.warning("%s: type %s cannot be rebuilt from the bag; topic %s left out",
                                mcap, schema.name, channel.topic)
                    continue
                qos = get_qos(channel.metadata)
                connections[cid] = writer.add_connection(channel.topic, schema.name, typestore=typestore,
                                                         serialization_format=channel.encoding,
                                                         offered_qos_profiles=qos)
            for cid, log_time, data in sorted(messages, key=lambda m: m[1]):
                conn = connections.get(cid)
                if conn is None:
                    continue
                writer.write(conn, log_time, data)
                report.messages += 1
                report.topics[conn.topic] = report.topics.get(conn.topic, 0) + 1
        os.replace(bag_dir / f"{mcap.stem}.mcap", mcap)
        if target.is_dir():
            os.replace(bag_dir / "metadata.yaml", target / "metadata.yaml")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    for leftover in mcap.parent.glob(f".{mcap.stem}.*"):  # a killed single-file recording's staging folder
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
    return report


__all__ = ["DEFAULT_CHUNK_SECONDS", "DurableBag", "RepairReport", "is_complete", "repair"]
