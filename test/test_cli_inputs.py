"""Command-line and OpenStreetMap inputs out of range: one clear error line, never a traceback."""
from __future__ import annotations

import pytest

from test_osm import SMALL
from usarsim.cli import main
from usarsim.config_loading import ConfigError
from usarsim.worldgen import osm

FORTY_DIGITS = "1" * 40


@pytest.mark.parametrize("command", [["run"], ["record", "-o", "x.mcap"], ["serve"], ["arena"]])
def test_a_forty_digit_seed_is_out_of_range_not_a_non_number(command, capsys):
    with pytest.raises(SystemExit) as stopped:
        main([*command, "--seed", FORTY_DIGITS])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "a seed is a whole number from 0 to 4294967295" in err and "(40 digits)" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_seeds_that_fit_are_accepted():
    from usarsim.arguments import seed_number

    assert seed_number("0") == 0 and seed_number(str(2**32 - 1)) == 2**32 - 1
    with pytest.raises(Exception, match="from 0 to"):
        seed_number("-1")


def test_osm_road_width_of_1e308(tmp_path):
    (tmp_path / "wide.osm").write_text(SMALL.replace('<tag k="highway" v="primary"/>',
                                                     '<tag k="highway" v="primary"/><tag k="width" v="1e308"/>'))
    with pytest.raises(ConfigError, match=r"wide.osm: way 10: width = 1e\+308 m, at most 100 m"):
        osm.convert(tmp_path / "wide.osm", tmp_path / "wide.yaml")
    assert not (tmp_path / "wide.yaml").exists()


def test_osm_building_taller_than_any(tmp_path):
    (tmp_path / "tall.osm").write_text(SMALL.replace('v="4"/>', 'v="4"/><tag k="height" v="50000"/>'))
    with pytest.raises(ConfigError, match="way 11: height = 50000 m, at most 1000 m"):
        osm.convert(tmp_path / "tall.osm", tmp_path / "tall.yaml")


def test_osm_extract_spanning_a_country(tmp_path, capsys):
    (tmp_path / "huge.osm").write_text(SMALL.replace('maxlat="10.0009" maxlon="20.00091"', 'maxlat="12" maxlon="23"'))
    assert main(["osm", str(tmp_path / "huge.osm")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usarsim: error: ") and "at most 5000 m a side" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["huge.osm"]  # nothing half written


def test_large_osm_extract_gets_a_map_resolution_that_fits():
    assert osm._map_resolution(100.0, 100.0) == osm.MAP_RESOLUTION
    coarse = osm._map_resolution(4000.0, 4000.0)
    assert (4002 / coarse) * (4002 / coarse) <= osm.MAX_MAP_CELLS


def test_arena_larger_than_a_stadium(tmp_path, capsys):
    assert main(["arena", "--seed", "1", "--size", "5000,5000", "--output", str(tmp_path)]) == 2
    assert "at most 200 m a side" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
