"""usarsim arena: determinism, the P2AT path guarantee, a loadable world and its map."""
import pytest
import yaml

from usarsim.cli import main
from usarsim.config_loading import ConfigError
from usarsim.sim.world import load_world_file
from usarsim.worldgen.arena import DIFFICULTIES, generate, unreachable_victims


def test_same_seed_same_arena_other_seed_other_arena(tmp_path):
    first = generate(11, 12.0, 10.0, "orange", tmp_path / "a.yaml")
    again = generate(11, 12.0, 10.0, "orange", tmp_path / "b.yaml")
    other = generate(12, 12.0, 10.0, "orange", tmp_path / "c.yaml")
    assert (tmp_path / "a.yaml").read_text() == (tmp_path / "b.yaml").read_text()
    assert first == again and first["static"] != other["static"]


@pytest.mark.slow  # fifty generated arenas
def test_fifty_seeds_every_victim_reachable_from_every_start(tmp_path):
    for seed in range(50):
        difficulty = DIFFICULTIES[seed % 3]
        path = tmp_path / f"{seed}.yaml"
        world = generate(seed, 10.0, 9.0, difficulty, path)
        assert world["victims"] and world["start_poses"]
        # the check the generator relies on, run again on the file as written
        assert unreachable_victims(path) == [], (seed, difficulty)
        spec = load_world_file(path)  # and the file is a valid world
        assert {v.id for v in spec.victims} == {v["id"] for v in world["victims"]}


def test_the_check_notices_a_walled_in_victim(tmp_path):
    path = tmp_path / "a.yaml"
    world = generate(4, 10.0, 9.0, "yellow", path)
    x, y, _ = world["victims"][0]["xyz"]
    ring = [{"kind": "box", "xyz": [x + dx, y + dy, 0.6], "size": size} for dx, dy, size in
            ((-1.5, 0, [0.1, 3.2, 1.2]), (1.5, 0, [0.1, 3.2, 1.2]), (0, -1.5, [3.2, 0.1, 1.2]), (0, 1.5, [3.2, 0.1, 1.2]))]
    world["static"] += ring
    path.write_text(yaml.safe_dump(world))
    assert world["victims"][0]["id"] in unreachable_victims(path)


def test_cli_writes_world_and_map(tmp_path, capsys):
    assert main(["arena", "--seed", "3", "--size", "12,10", "--difficulty", "red", "--output", str(tmp_path)]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["arena_red_3.yaml", "arena_red_3_map.pgm", "arena_red_3_map.yaml"]
    assert load_world_file(tmp_path / "arena_red_3.yaml").name == "arena_red_3"


@pytest.mark.parametrize("args, message", [
    (["--size", "3,3"], "at least 6 x 6"),
])
def test_bad_arguments_get_one_clear_error(tmp_path, capsys, args, message):
    assert main(["arena", "--seed", "1", "--output", str(tmp_path), *args]) == 2
    assert message in capsys.readouterr().err
    with pytest.raises(ConfigError, match="difficulty"):
        generate(1, 10, 10, "purple", tmp_path / "x.yaml")
