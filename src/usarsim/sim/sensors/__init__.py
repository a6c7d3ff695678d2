"""Sensor families, one module each; see ``base`` and ``registry``."""
from usarsim.sim.sensors.base import CommandResult, CommonParams, Sensor
from usarsim.sim.sensors.registry import create, is_camera, known_types, params_for, register

__all__ = ["CommandResult", "CommonParams", "Sensor", "create", "is_camera", "known_types", "params_for", "register"]
