"""What the camera sees: textures, sky, world lights and the headlight; bad looks in a world file."""
import numpy as np
import pytest

from usarsim.config_loading import ConfigError
from usarsim.sim.lighting import OUTDOOR_SKY
from usarsim.sim.simulator import Simulator
from usarsim.sim.textures import TEXTURES
from usarsim.sim.world import load_world_file


def frame(world, start="Start1", light=False, render=None, robot="P2AT", noise=False):
    with Simulator(world, physics_rate=100.0, render=render, noise=noise) as sim:
        r = sim.spawn(robot, "R", start=start)
        sim.run_for(0.2)
        r.light_on = light
        camera = next(s for s in r.sensors if s.spec.type == "Camera")
        return np.frombuffer(camera.render(), dtype=np.uint8).reshape(camera.params.height, camera.params.width, 3)


def test_headlight_brightens_the_frame_indoors():
    dark, lit = frame("yellow"), frame("yellow", light=True)
    assert not np.array_equal(dark, lit)
    assert lit.astype(float).mean() > dark.astype(float).mean() + 3  # the wall 3 m ahead lights up
    assert np.all(lit >= dark)  # light only adds


def test_world_lights_change_the_frame(tmp_path):
    text = (tmp_path / "w.yaml")
    world = """name: lit
description: lights test
gps_origin: {lat: 1, lon: 2}
start_poses:
  - {tag: Start1, xyz: [0, 0, 0]}
static:
  - {kind: box, name: wall, xyz: [3, 0, 0.6], size: [0.2, 6, 1.2]}
"""
    text.write_text(world)
    unlit = frame(str(text))
    text.write_text(world + "lights:\n  - {xyz: [2.0, 1.0, 3.0], intensity: 1.0}\n")
    lit = frame(str(text))
    assert not np.array_equal(unlit, lit)


def test_outdoor_sky_and_textures():
    outdoors = frame("town")
    sky = np.round(np.asarray(OUTDOOR_SKY) * 255)
    assert np.all(outdoors[0, outdoors.shape[1] // 2] == sky)  # straight up the street: open sky
    plain = frame("yellow", render={"textures": False, "shadows": False})
    textured = frame("yellow")

    def grain(image):  # change along the bottom rows (the floor in front of the robot), per 1/320 of the width
        rows = image[-image.shape[0] // 8:, ::max(1, image.shape[1] // 320)].astype(float)
        return np.abs(np.diff(rows, axis=1)).mean()
    assert grain(plain) < 0.05 < grain(textured)


def test_textures_are_deterministic():
    for make in TEXTURES.values():
        assert np.array_equal(make(), make())


@pytest.mark.parametrize("extra, message", [
    ("static:\n  - {kind: box, xyz: [3, 0, 0.5], texture: marble}\n", r"static\[0\]\.texture: unknown texture 'marble'"),
    ("floor: {texture: gold}\n", r"floor\.texture: unknown texture 'gold'"),
    ("lights:\n  - {xyz: [0, 0, 3], intensity: -1}\n", r"lights\[0\]\.intensity must be >= 0"),
    ("lights:\n  - {xyz: [0, .nan, 3]}\n", r"lights.*finite"),
    ("sky: [0.5, 2.0, 0.5]\n", r"sky: RGB components must be in 0\.\.1"),
])
def test_bad_looks_name_file_and_key(tmp_path, extra, message):
    path = tmp_path / "w.yaml"
    path.write_text("name: t\ndescription: t\ngps_origin: {lat: 1, lon: 2}\nstart_poses:\n"
                    "  - {tag: A, xyz: [0, 0, 0]}\n" + extra)
    with pytest.raises(ConfigError, match=r"w\.yaml.*" + message):
        load_world_file(path)


SEE_THROUGH = """name: pane
description: see-through test
gps_origin: {lat: 1, lon: 2}
start_poses:
  - {tag: Start1, xyz: [0, 0, 0]}
static:
  - {kind: box, name: target, xyz: [4, 0, 0.6], size: [0.2, 8, 3], color: [1, 0, 0, 1], texture: none}
  - {kind: box, name: pane, xyz: [1.5, 0, 0.6], size: [0.05, 8, 3], surface: SURFACE, color: [0.7, 0.85, 0.95, 0.3]}
"""


@pytest.mark.parametrize("surface", ["transparent", "mesh_fence"])
def test_camera_sees_through_glass_and_fences(tmp_path, surface):
    path = tmp_path / "w.yaml"
    path.write_text(SEE_THROUGH.replace("SURFACE", surface))
    image = frame(str(path)).astype(int)
    middle = image[100:140, 100:220]
    red = (middle[..., 0] > middle[..., 1] + 40) & (middle[..., 0] > middle[..., 2] + 40)
    if surface == "transparent":
        assert red.mean() > 0.95  # the red wall behind the glass, tinted
    else:
        assert 0.3 < red.mean() < 0.95  # red between the wires
