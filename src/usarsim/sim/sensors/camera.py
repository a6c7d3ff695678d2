"""Camera: RGB images rendered by PyBullet (TinyRenderer, or EGL when enabled).

Rendering is the most expensive thing the simulator does, so a camera only
renders while ``active`` (a front door asked for images) or when configured
with ``always_on``. FOV is horizontal and adjustable within [min, max].
Each view is finished in NumPy with what the renderers lack: the sky, the world's
lamps and the headlight (sim/lighting.py), the water's optics (sim/underwater.py);
each frame then gets sensor noise (camera_noise.py). docs/sensors.md (Camera) says
what the camera can and cannot show.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pybullet as p

from usarsim.sim.lighting import add_lamps, fill_sky, headlight, scene_light, world_lamps
from usarsim.sim.readings import CameraImage, Lens, pinhole_lens
from usarsim.sim.see_through import composite
from usarsim.sim.sensors.base import CommandResult, CommonParams, Sensor
from usarsim.sim.sensors.camera_noise import add_sensor_noise
from usarsim.sim.sensors.frame_geometry import SKY_DEPTH, FrameGeometry
from usarsim.sim.sensors.ptz import pan_tilt_command
from usarsim.sim.sensors.registry import register
from usarsim.sim.underwater import apply_water


@dataclass
class CameraParams(CommonParams):
    """USARBot.RobotCamera keys (radians) plus image size, range and sensor noise."""

    scan_interval: float = 0.2
    width: int = 320  # USARCamera's TextureResolutionX/Y and the image server's default (docs/sensors.md)
    height: int = 240
    fov: float = 0.7854  # CameraDefFov
    min_fov: float = 0.3491
    max_fov: float = 2.0944
    near: float = 0.02
    far: float = 50.0
    always_on: bool = False
    # sensor noise (camera_noise.py), off as in USARSim; e.g. read_noise 2, shot_noise 0.05 for a webcam
    read_noise: float = 0.0  # pixel values (0..255), standard deviation
    shot_noise: float = 0.0  # variance added per unit of pixel value

    def check(self) -> None:
        super().check()
        if self.width <= 0 or self.height <= 0:
            raise ValueError("width and height must be positive")
        if not (self.read_noise >= 0 and self.shot_noise >= 0):
            raise ValueError("read_noise and shot_noise must be >= 0")


def vertical_fov(horizontal: float, width: int, height: int) -> float:
    """Vertical FOV matching a horizontal FOV for a pinhole camera."""
    return 2.0 * math.atan(math.tan(horizontal / 2.0) * height / width)


@functools.lru_cache(maxsize=8)
def _rgb_indices(pixels: int) -> np.ndarray:
    """Flat indices of the R, G and B bytes of ``pixels`` RGBA pixels (one gather is twice as
    fast as copying a strided RGB slice, 1.5 ms instead of 3.4 ms at 640x480)."""
    indices = np.arange(pixels * 4).reshape(-1, 4)[:, :3].reshape(-1)
    indices.setflags(write=False)
    return indices


@register("Camera")
class Camera(Sensor):
    """Renders from the mount pose looking along +x, with +z up (FLU mount)."""

    Params = CameraParams

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        prm: CameraParams = self.params  # type: ignore[assignment]
        self.fov = prm.fov
        self._active = prm.always_on

    @property
    def active(self) -> bool:
        """True while frames are wanted (a client asked for images, or ``always_on``)."""
        return self._active

    @active.setter
    def active(self, on: bool) -> None:
        if on and not self._active:
            self.robot.wake_sensors()  # render from the next tick on
        self._active = on

    def due(self, now: float) -> bool:
        return self._active and super().due(now)

    def next_due(self) -> float:
        return super().next_due() if self._active else math.inf

    def set_fov(self, fov: float) -> float:
        """Set the horizontal FOV; 0 restores the default; clamped to [min, max]."""
        prm: CameraParams = self.params  # type: ignore[assignment]
        self.fov = prm.fov if fov == 0 else max(prm.min_fov, min(prm.max_fov, fov))
        return self.fov

    def render(self) -> bytes:
        """One RGB8 frame as packed bytes, rows top to bottom, with the sensor's noise."""
        prm: CameraParams = self.params  # type: ignore[assignment]
        return add_sensor_noise(self.render_image(), self.rng, prm.read_noise, prm.shot_noise).tobytes()

    def render_image(self) -> np.ndarray:
        """The noiseless frame (height x width x 3)."""
        prm: CameraParams = self.params  # type: ignore[assignment]
        eye, rot = self.robot.mount_pose(self.spec.mount)
        projection = p.computeProjectionMatrixFOV(math.degrees(vertical_fov(self.fov, prm.width, prm.height)),
                                                  prm.width / prm.height, prm.near, prm.far)
        return self.render_view(eye, rot[:, 0], rot[:, 2], prm.width, prm.height, projection)[0]

    def render_view(self, eye: np.ndarray, forward: np.ndarray, up: np.ndarray, width: int, height: int,
                    projection: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """RGB (height x width x 3) and depth buffer of one view from ``eye`` along ``forward``,
        in the world's light and sky, glass and fences seen through, lamps, headlight and water added."""
        view = p.computeViewMatrix(eye.tolist(), (eye + forward).tolist(), up.tolist())
        world = self.env.world
        see_through = bool(world.glass or world.fences)
        settings = self.render_settings(eye)

        def draw() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            _, _, rgba, depth, seg = p.getCameraImage(width, height, view, projection, **settings,
                                                      physicsClientId=self.env.client)
            shape = (height, width)
            rgb = np.asarray(rgba, dtype=np.uint8).reshape(-1)[_rgb_indices(shape[0] * shape[1])].reshape(*shape, 3)
            depth = np.asarray(depth, dtype=float).reshape(shape)
            fill_sky(rgb, depth >= SKY_DEPTH, world.sky)
            return rgb, depth, np.asarray(seg, dtype=np.int64).reshape(shape)

        if see_through:
            rgb, depth = composite(self.env.client, draw, world.glass, world.fences, world.colors)
        else:
            rgb, depth, _ = draw()
        lamps = world_lamps(world.spec.outdoor, [(lt.xyz, lt.intensity) for lt in world.spec.lights])
        if self.robot.light_on:
            lamps.append(headlight(eye, forward, self.robot.spec.light_intensity))
        if lamps or world.spec.water:
            geometry = FrameGeometry.from_depth(depth, view, projection, eye)
            rgb = apply_water(add_lamps(rgb, geometry, lamps), geometry, world.spec.water, world.sky)
        return rgb, depth

    def render_settings(self, eye: np.ndarray) -> dict[str, Any]:
        """``getCameraImage`` keywords of a view from ``eye``: the renderer, the world's light and
        shadows, and the segmentation mask when glass or fences must be seen through."""
        options = self.env.render_options
        world = self.env.world
        light = scene_light(world.spec.outdoor, [(lt.xyz, lt.intensity) for lt in world.spec.lights], eye)
        return {"renderer": p.ER_BULLET_HARDWARE_OPENGL if options.get("egl") else p.ER_TINY_RENDERER,
                "flags": 0 if world.glass or world.fences else p.ER_NO_SEGMENTATION_MASK,
                **light.camera_kwargs(options.get("shadows", True))}

    def lens(self) -> Lens:
        """The intrinsics of the frames as they are now (an ideal pinhole of the current FOV)."""
        prm: CameraParams = self.params  # type: ignore[assignment]
        return pinhole_lens(prm.width, prm.height, self.fov)

    def read(self, now: float) -> CameraImage:
        prm: CameraParams = self.params  # type: ignore[assignment]
        return CameraImage(**self.header(now), width=prm.width, height=prm.height, rgb=self.render(),
                           horizontal_fov=self.fov, lens=self.lens())

    def command(self, opcode: str, params: tuple[Any, ...]) -> CommandResult:
        """FOV <rad> sets the field of view (reply carries the FOV in force); PanTilt moves the mount (see ptz)."""
        if opcode.upper() == "FOV":
            try:
                fov = float(params[0])
            except (IndexError, TypeError, ValueError):
                return CommandResult(False, message="FOV needs a number")
            if not math.isfinite(fov) or fov < 0:
                return CommandResult(False, message="FOV must be a finite angle >= 0 (0 restores the default)")
            return CommandResult(True, (("FOV", self.set_fov(fov)),))
        if opcode.upper() == "PANTILT":
            return pan_tilt_command(self.robot, self.spec.mount.parent, params)
        return super().command(opcode, params)
