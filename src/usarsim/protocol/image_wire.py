"""Image-server wire format: frame messages out, requests in (no sockets here).

Server -> client, one message per frame: ``ImageType`` (1 byte), ``ImageSize``
(4 bytes, big-endian, length of the data), ``ImageData``. Raw data (type 0) is
width and height (2 bytes each, big-endian) then packed RGB rows, top row first;
JPEG data (types 1..5) is a complete JPEG file.

Client -> server: ``OK`` asks for the next whole frame (the manual's
acknowledgement); ``U`` plus four big-endian unsigned 32-bit numbers
``x, y, width, height`` asks for that rectangle of the next frame (the UDK image
server's partial request, used to cut one tile out of a MultiView mosaic).
Any other byte between requests is skipped, as the UDK server does (so ``OK\\r\\n``
works too).
"""
from __future__ import annotations

import io
import struct
from dataclasses import dataclass

from PIL import Image

RAW = 0
# ImageType -> JPEG quality: the qualities of the FreeImage flags the UDK image server
# uses for these types (SUPERB, GOOD, NORMAL, AVERAGE, BAD).
JPEG_QUALITY = {1: 100, 2: 75, 3: 50, 4: 25, 5: 10}
# The names the UDK configuration accepts for ImageType (UPISImageServer.uc).
TYPE_NAMES = {"raw": 0, "super": 1, "good": 2, "normal": 3, "fair": 4, "bad": 5}
HEADER = struct.Struct(">BI")
RAW_SIZE = struct.Struct(">HH")
RECT = struct.Struct(">IIII")
MAX_SIDE = 0xFFFF  # raw frames carry width and height in 2 bytes


def parse_image_type(text: str) -> int:
    """``raw``/``super``/``good``/``normal``/``fair``/``bad`` or 0..5 -> the ImageType byte."""
    value = TYPE_NAMES.get(text.strip().lower())
    if value is None:
        try:
            value = int(text)
        except ValueError:
            value = -1
    if value != RAW and value not in JPEG_QUALITY:
        raise ValueError(f"image type must be one of {', '.join(TYPE_NAMES)} or 0..5, got {text!r}")
    return value


@dataclass(frozen=True)
class Encoding:
    """How frames leave the server: the ImageType byte and, for JPEG, the quality used."""

    image_type: int = 3
    quality: int | None = None  # None: the quality of image_type

    def __post_init__(self) -> None:
        if self.image_type != RAW and self.image_type not in JPEG_QUALITY:
            raise ValueError(f"image type must be 0 (raw) or 1..5 (JPEG), got {self.image_type}")
        if self.quality is not None and not 1 <= self.quality <= 100:
            raise ValueError(f"JPEG quality must be 1..100, got {self.quality}")

    @property
    def jpeg_quality(self) -> int:
        return self.quality if self.quality is not None else JPEG_QUALITY.get(self.image_type, 0)


def encode_frame(picture: Image.Image, encoding: Encoding) -> bytes:
    """One wire message for an RGB picture."""
    if encoding.image_type == RAW:
        if picture.width > MAX_SIDE or picture.height > MAX_SIDE:
            raise ValueError(f"raw frames are at most {MAX_SIDE} pixels a side")
        data = RAW_SIZE.pack(picture.width, picture.height) + picture.tobytes()
    else:
        buffer = io.BytesIO()
        picture.save(buffer, format="JPEG", quality=encoding.jpeg_quality)
        data = buffer.getvalue()
    return HEADER.pack(encoding.image_type, len(data)) + data


def decode_frame(message: bytes) -> tuple[int, Image.Image]:
    """(ImageType, RGB picture) of one whole wire message (for clients and tests)."""
    image_type, size = HEADER.unpack_from(message)
    data = message[HEADER.size:HEADER.size + size]
    if len(data) != size:
        raise ValueError(f"message holds {len(data)} of {size} data bytes")
    if image_type == RAW:
        width, height = RAW_SIZE.unpack_from(data)
        return image_type, Image.frombytes("RGB", (width, height), data[RAW_SIZE.size:])
    return image_type, Image.open(io.BytesIO(data)).convert("RGB")


@dataclass(frozen=True)
class FrameRequest:
    """A client's request: the whole frame (``rect`` None) or a rectangle x, y, width, height."""

    rect: tuple[int, int, int, int] | None = None


class RequestParser:
    """Turns the bytes a client sends into requests; counts bytes that are no request."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.junk = 0  # bytes skipped since the last request

    @property
    def buffered(self) -> int:
        """Bytes received and not parsed yet."""
        return len(self._buffer)

    def feed(self, data: bytes, limit: int | None = None) -> list[FrameRequest]:
        """The requests in what came so far, at most ``limit``: the bytes of the others stay buffered."""
        self._buffer += data
        found: list[FrameRequest] = []
        buf = self._buffer
        while buf and (limit is None or len(found) < limit):
            head = buf[0]
            if head in b"Oo":
                if len(buf) < 2:
                    break
                if buf[1] in b"Kk":
                    found.append(FrameRequest())
                    del buf[:2]
                    self.junk = 0
                    continue
            elif head == ord("U"):
                if len(buf) < 1 + RECT.size:
                    break
                found.append(FrameRequest(RECT.unpack_from(buf, 1)))
                del buf[:1 + RECT.size]
                self.junk = 0
                continue
            del buf[:1]
            self.junk += 1
        return found


def crop(picture: Image.Image, rect: tuple[int, int, int, int] | None) -> Image.Image:
    """The requested rectangle clipped to the picture; the whole picture if nothing is left."""
    if rect is None:
        return picture
    x, y, width, height = rect
    left, top = min(x, picture.width), min(y, picture.height)
    right, bottom = min(x + width, picture.width), min(y + height, picture.height)
    if right <= left or bottom <= top:
        return picture
    return picture.crop((left, top, right, bottom))


__all__ = ["RAW", "JPEG_QUALITY", "TYPE_NAMES", "Encoding", "FrameRequest", "RequestParser", "crop",
           "decode_frame", "encode_frame", "parse_image_type"]
