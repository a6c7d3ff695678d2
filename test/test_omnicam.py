"""The omnidirectional camera: mirror geometry, its lens (camera_info), and rendered frames
in which coloured boxes at known bearings appear where the mirror puts them."""
import math

import numpy as np
import pybullet as p
import pytest

from usarsim.protocol.image_server import cameras_of
from usarsim.protocol.messages import conf_sensors
from usarsim.ros.kinematics import robot_joints
from usarsim.sim.catalogue import load_robot
from usarsim.sim.sensors.omnicam import OmniCamera, mirror_geometry
from usarsim.sim.simulator import Simulator

MOUNT_HEIGHT = 0.45  # OmniP2DX: the mirror's focus above base_link


def project(lens, d_opt):
    """The unified model as a camera_info consumer applies it (xi = d[0])."""
    x, y, z = d_opt / np.linalg.norm(d_opt)
    xi = lens.d[0]
    return lens.fx * x / (z + xi) + lens.cx, lens.fy * y / (z + xi) + lens.cy


def test_rim_maps_to_the_circle_and_angles_to_half_angle_tangents():
    g = mirror_geometry(200, 160, 0.2618, 1.0)
    assert g.rim == 80.0 and g.gamma * math.tan(g.max_angle / 2) == pytest.approx(80.0)
    d, inside = g.directions()
    cols, rows = np.meshgrid(np.arange(200) + 0.5 - 100, np.arange(160) + 0.5 - 80)
    radius = np.hypot(cols, rows)
    psi = np.arccos(np.clip(d[..., 0], -1, 1))
    assert np.allclose(g.gamma * np.tan(psi / 2), radius)
    assert (inside == (radius <= 80.0)).all()
    # zoom scales the circle as a pinhole in front of the mirror would
    assert mirror_geometry(200, 160, 0.2618, 2.0).rim == 160.0


def test_lens_reprojects_every_pixel_direction():
    """camera_info's unified model (xi = 1, fx < 0: a reflection) maps each pixel's ray back to it."""
    with Simulator("empty", seed=1) as sim:
        cam = next(s for s in sim.spawn("OmniP2DX", "R1").sensors if isinstance(s, OmniCamera))
        lens, g = cam.lens(), cam.geometry()
    assert lens.model == "unified" and lens.d == (1.0,) and lens.fx < 0 < lens.fy
    d, inside = g.directions()
    for row, col in [(10, 160), (160, 300), (200, 100), (100, 40), (161, 159)]:
        assert inside[row, col]
        dx, dy, dz = d[row, col]  # mount frame; the optical frame is z = x, x = -y, y = -z
        u, v = project(lens, np.array([-dy, -dz, dx]))
        assert (u, v) == pytest.approx((col + 0.5, row + 0.5), abs=1e-6)


def _box(client, xyz, rgba, half=(0.25, 0.25, 0.25)):
    visual = p.createVisualShape(p.GEOM_BOX, halfExtents=half, rgbaColor=rgba, physicsClientId=client)
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=client)
    return p.createMultiBody(0, shape, visual, basePosition=xyz, physicsClientId=client)


def _pixels(image, channel):
    """Pixels of a pure colour, shaded or lit (its channel well above the other two)."""
    others = np.delete(image, channel, axis=-1).max(axis=-1).astype(int)
    return (image[..., channel] > 50) & (image[..., channel] > 3 * others + 20)


@pytest.fixture(scope="module")
def frame():
    with Simulator("empty", seed=1) as sim:
        robot = sim.spawn("OmniP2DX", "R1", position=(0.0, 0.0, 0.0))
        sim.run_for(0.3)
        eye, _ = robot.mount_pose(robot.sensor("OmniCam").spec.mount)
        boxes = {}
        # blue 60 degrees left of forward; green 135 degrees right, behind; both at the focus' height
        for name, bearing, rgba in (("blue", math.radians(60), (0, 0, 1, 1)), ("green", math.radians(-135), (0, 1, 0, 1))):
            xyz = (eye[0] + 3.0 * math.cos(bearing), eye[1] + 3.0 * math.sin(bearing), eye[2])
            _box(sim.client, xyz, rgba)
            boxes[name] = bearing
        cam = robot.sensor("OmniCam")
        reading = cam.read(sim.time)
        image = np.frombuffer(reading.rgb, dtype=np.uint8).reshape(reading.height, reading.width, 3)
        return image, cam.geometry(), boxes


@pytest.mark.parametrize("colour,channel", [("blue", 2), ("green", 1)])
def test_box_appears_at_its_bearing_on_the_horizon_circle(frame, colour, channel):
    image, g, boxes = frame
    rows, cols = np.nonzero(_pixels(image, channel))
    assert len(rows) > 20, f"the {colour} box is not in the image"
    dx, dy = cols.mean() + 0.5 - g.width / 2, rows.mean() + 0.5 - g.height / 2
    # mirrored: robot forward at the top, robot left on the right
    bearing = boxes[colour]
    expected = (g.gamma * math.sin(bearing), -g.gamma * math.cos(bearing))  # horizon: radius gamma * tan(45 deg)
    assert math.atan2(dx, -dy) == pytest.approx(bearing, abs=math.radians(3))
    assert math.hypot(dx, dy) == pytest.approx(math.hypot(*expected), rel=0.05)


def test_outside_the_mirror_is_black_and_inside_is_not(frame):
    image, g, _ = frame
    cols, rows = np.meshgrid(np.arange(g.width) + 0.5 - g.width / 2, np.arange(g.height) + 0.5 - g.height / 2)
    radius = np.hypot(cols, rows)
    assert (image[radius > g.rim + 0.5] == 0).all()
    assert (image[radius < g.rim - 1].max(axis=-1) > 0).mean() > 0.99


def test_every_front_door_sees_a_camera():
    spec = load_robot("OmniP2DX")
    optical = {j.child for j in robot_joints(spec)}
    assert "omnicam_link_optical" in optical  # ROS images are stamped in it
    with Simulator("empty", seed=1) as sim:
        robot = sim.spawn("OmniP2DX", "R1")
        assert [c.name for c in cameras_of(robot)] == ["Camera", "OmniCam"]  # the image server serves both
    conf = conf_sensors(spec, "OmniCamera")
    assert "{CameraDefFov 0.7854}" in conf and "{MaxElevation 0.2618}" in conf
