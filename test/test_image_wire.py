"""Image-server wire format and MultiView layout: pure logic, no sockets."""
import struct

import pytest
from PIL import Image

from usarsim.protocol.image_wire import (Encoding, FrameRequest, RequestParser, crop, decode_frame, encode_frame,
                                         parse_image_type)
from usarsim.protocol.multiview import MultiViewConfig, assign_tiles, compose, fit


def picture(width=64, height=48, seed=0):
    return Image.frombytes("RGB", (width, height), bytes((i * 7 + seed) % 251 for i in range(width * height * 3)))


def test_raw_message_byte_by_byte():
    pic = picture(3, 2)
    message = encode_frame(pic, Encoding(0))
    assert message[0] == 0
    assert struct.unpack(">I", message[1:5])[0] == 4 + 3 * 2 * 3 == len(message) - 5
    assert message[5:9] == b"\x00\x03\x00\x02"  # width, height: 2 bytes each, big-endian
    assert message[9:] == pic.tobytes()  # RGB, top row first, no padding
    kind, decoded = decode_frame(message)
    assert kind == 0 and decoded.tobytes() == pic.tobytes()


def test_jpeg_types_use_their_quality():
    pic = picture(160, 120)
    sizes = {}
    for image_type in range(1, 6):
        message = encode_frame(pic, Encoding(image_type))
        assert message[0] == image_type and message[5:7] == b"\xff\xd8"  # a JPEG stream
        assert struct.unpack(">I", message[1:5])[0] == len(message) - 5
        kind, decoded = decode_frame(message)
        assert (kind, decoded.size) == (image_type, (160, 120))
        sizes[image_type] = len(message)
    assert sizes[1] > sizes[3] > sizes[5]  # super > normal > bad
    assert len(encode_frame(pic, Encoding(5, quality=100))) == sizes[1]  # quality overrides the type's


def test_encoding_and_type_names_are_checked():
    assert [parse_image_type(t) for t in ("raw", "SUPER", "good", "normal", "fair", "bad", "4")] == [0, 1, 2, 3, 4, 5, 4]
    for bad in ("jpeg", "6", "-1", ""):
        with pytest.raises(ValueError):
            parse_image_type(bad)
    with pytest.raises(ValueError):
        Encoding(9)
    with pytest.raises(ValueError):
        Encoding(2, quality=0)
    with pytest.raises(ValueError):
        decode_frame(encode_frame(picture(), Encoding(0))[:-1])  # a cut message


def test_requests_ok_and_rectangles():
    parser = RequestParser()
    assert parser.feed(b"O") == []  # half a request waits for the rest
    assert parser.feed(b"K\r\n") == [FrameRequest()]
    rect = b"U" + struct.pack(">IIII", 320, 0, 320, 240)
    assert parser.feed(b"ok" + rect[:7]) == [FrameRequest()]
    assert parser.feed(rect[7:] + b"OK") == [FrameRequest((320, 0, 320, 240)), FrameRequest()]
    assert parser.junk == 0
    assert parser.feed(b"hellx") == []
    assert parser.junk == 5


def test_a_limit_leaves_the_other_requests_buffered():
    parser = RequestParser()
    assert parser.feed(b"OK" * 10, limit=3) == [FrameRequest()] * 3
    assert parser.buffered == 14  # seven requests wait as bytes, not as queued requests
    assert parser.feed(b"", limit=10) == [FrameRequest()] * 7
    assert parser.buffered == 0


def test_crop_clips_to_the_picture():
    pic = picture(100, 50)
    assert crop(pic, None) is pic
    assert crop(pic, (10, 20, 30, 10)).size == (30, 10)
    assert crop(pic, (90, 40, 30, 30)).size == (10, 10)
    assert crop(pic, (200, 0, 10, 10)) is pic  # nothing left: the whole frame


def test_multiview_layout():
    box = MultiViewConfig(cameras=5, tile_width=160, tile_height=120)
    assert (box.columns, box.rows, box.size) == (3, 2, (480, 240))
    assert [box.origin(i) for i in (0, 2, 3)] == [(0, 0), (320, 0), (0, 120)]
    wide = MultiViewConfig(cameras=4, wide_mode=4, tile_width=10, tile_height=10)
    assert (wide.columns, wide.rows, wide.size) == (4, 1, (40, 10))
    for bad in (dict(cameras=0), dict(wide_mode=-1), dict(tile_width=0)):
        with pytest.raises(ValueError):
            MultiViewConfig(**bad)


def test_tiles_keep_their_place_and_free_it():
    tiles = assign_tiles({}, ["a", "b", "c"], capacity=2)
    assert tiles == {0: "a", 1: "b"}
    tiles = assign_tiles(tiles, ["b", "c"], capacity=2)  # a left: c takes its place, b stays
    assert tiles == {0: "c", 1: "b"}
    assert assign_tiles(tiles, [], capacity=2) == {}


def test_compose_fits_each_picture_into_its_tile():
    config = MultiViewConfig(cameras=4, tile_width=32, tile_height=24)
    red = Image.new("RGB", (64, 48), (255, 0, 0))
    tall = Image.new("RGB", (10, 40), (0, 255, 0))
    mosaic = compose(config, {1: red, 2: tall})
    assert mosaic.size == (64, 48)
    assert mosaic.getpixel((0, 0)) == (0, 0, 0)  # tile 0 empty: black
    assert mosaic.getpixel((32, 0)) == mosaic.getpixel((63, 23)) == (255, 0, 0)  # tile 1 filled
    assert mosaic.getpixel((16, 36)) == (0, 255, 0)  # tile 2: narrow picture centred
    assert mosaic.getpixel((1, 36)) == (0, 0, 0)  # ... with black bars (aspect kept)
    assert fit(red, 64, 48) is red
