"""World, OSM and map inputs are bounded: a small file that asks for too much is refused at once,
with one error naming the file and the key, before anything heavy is built."""
from __future__ import annotations

import pytest

from usarsim.config_loading import ConfigError, load_yaml_node
from usarsim.sim import mapgen
from usarsim.sim.world import load_world, load_world_file
from usarsim.sim.world_limits import MAX_ENTRIES

HEAD = """name: t
description: bounds
gps_origin: {lat: 0, lon: 0, alt: 0}
start_poses: [{tag: S, xyz: [0, 0, 0]}]
"""


def world_file(tmp_path, body: str, name: str = "w.yaml"):
    path = tmp_path / name
    path.write_text(HEAD + body, encoding="utf-8")
    return path


def refused(path, *words: str) -> str:
    with pytest.raises(ConfigError) as caught:
        load_world_file(path)
    message = str(caught.value)
    assert message.startswith(str(path)), message
    for word in words:
        assert word in message, message
    return message


def test_stairs_of_a_billion_steps(tmp_path):
    path = world_file(tmp_path, "static:\n  - {kind: stairs, xyz: [0, 0, 0], size: [3, 1, 2], steps: 1000000000}\n")
    assert path.stat().st_size < 300
    refused(path, "1000000000 steps", "at most 1024")


def test_stairs_a_thousand_kilometres_high(tmp_path):
    refused(world_file(tmp_path, "static:\n  - {kind: stairs, xyz: [0, 0, 0], size: [3, 1, 1.0e6], steps: 6}\n"),
            "static[0].size", "1e+06 m", "10000 m")
    # with no step count the height alone asks for millions of steps
    refused(world_file(tmp_path, "static:\n  - {kind: stairs, xyz: [0, 0, 0], size: [3, 1, 1.0e6]}\n"),
            "steps", "at most 1024")


def test_too_many_boxes_refused_before_converting_them(tmp_path):
    boxes = ", ".join(["*b"] * MAX_ENTRIES["static"])
    path = world_file(tmp_path, f"static: [&b {{kind: box, xyz: [0, 0, 0]}}, {boxes}]\n")
    refused(path, "static", "10001 entries", "at most 10000")


@pytest.mark.parametrize("key, entry", [
    ("victims", "{id: V, xyz: [0, 0, 0]}"),
    ("obstacles", "{kind: box, xyz: [0, 0, 0.1]}"),
    ("lights", "{xyz: [0, 0, 3]}"),
])
def test_too_many_entries(tmp_path, key, entry):
    items = ", ".join(["*e"] * MAX_ENTRIES[key])
    refused(world_file(tmp_path, f"{key}: [&e {entry}, {items}]\n"), key, f"{MAX_ENTRIES[key] + 1} entries")


def test_prism_of_too_many_corners(tmp_path):
    points = ", ".join(f"[{i}, {(i * 7) % 13}]" for i in range(20_001))
    refused(world_file(tmp_path, f"static:\n  - {{kind: prism, xyz: [0, 0, 0], points: [{points}]}}\n"),
            "static[0]", "20001 corners", "at most 20000")


def test_alias_bomb_of_hole_points(tmp_path):
    # 3 kB of text standing for 3 million values: a 1000-point ring used as 1000 holes
    ring = ", ".join(f"[{0.001 * i}, 0.5]" for i in range(1000))
    holes = ", ".join(["*r"] * 1000)
    path = world_file(tmp_path, f"ring: &r [{ring}]\nstatic:\n  - {{kind: prism, xyz: [0, 0, 0], size: [1, 1, 1],\n"
                                f"     points: [[0, 0], [10, 0], [10, 10], [0, 10]], holes: [{holes}]}}\n")
    assert path.stat().st_size < 30_000
    refused(path, "static", "more than 2000000 values", "aliases")


def test_an_alias_inside_itself_is_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text("a: &a [1, *a]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="contains it"):
        load_yaml_node(path)


def test_positions_far_outside_any_world(tmp_path):
    refused(world_file(tmp_path, "victims: [{id: V1, xyz: [0, 2.5e7, 0]}]\n"), "victims[0] 'V1'.xyz", "2.5e+07 m")
    refused(world_file(tmp_path, "floor: {size: [1e9, 10]}\n"), "floor", "1e+09 m")


def test_exponent_numbers_are_numbers(tmp_path):
    spec = load_world_file(world_file(tmp_path, "gravity: -9.81e0\nmap_resolution: 5e-2\nair_density: 1.2E+0\n"
                                                "floor: {size: [1.0e2, 4E1]}\n"))
    assert spec.gravity == -9.81 and spec.map_resolution == 0.05 and spec.air_density == 1.2
    assert spec.floor.size == (100.0, 40.0)


def test_shipped_worlds_fit_the_limits_with_margin():
    for name in ("orange", "red", "town", "yellow"):
        spec = load_world(name)
        assert len(spec.static) * 10 < MAX_ENTRIES["static"] and len(spec.victims) * 10 < MAX_ENTRIES["victims"]


def test_map_of_a_huge_extent_is_refused_before_building(tmp_path):
    spec = load_world_file(world_file(tmp_path, "static:\n  - {kind: box, xyz: [-4000, 0, 0.5]}\n"
                                                "  - {kind: box, xyz: [4000, 0, 0.5]}\n"))
    with pytest.raises(ConfigError, match="cells, at most 4000000: give a coarser map_resolution"):
        mapgen.occupancy_maps(spec, 0.05)


def _blank_png(path, width: int, height: int) -> None:
    """A grey PNG of width x height written row by row (a few hundred kB: it is all zeros)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    packer, row = zlib.compressobj(9), b"\0" * (width + 1)  # filter byte + pixels
    pixels = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b""))


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
@pytest.mark.parametrize("side", [12_000, 20_000])
def test_huge_heightmap_refused_before_decoding(tmp_path, side):
    # 144 and 400 megapixels: decoded to floats they would take 1.2 and 3.2 GB
    _blank_png(tmp_path / "big.png", side, side)
    spec = load_world_file(world_file(tmp_path, "outdoor: true\nterrain: {heightmap: big.png, size: [100, 100]}\n"))
    from usarsim.sim.terrain import load_heights

    with pytest.raises(ConfigError, match="terrain.heightmap: big.png .*use 2..1024 samples per side"):
        load_heights(spec.terrain, tmp_path, str(tmp_path / "w.yaml"))
