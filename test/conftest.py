"""Test-wide settings."""
import os

# Cameras in tests render with TinyRenderer everywhere (same images on every machine, and no
# 0.5 s EGL plugin start-up per Simulator on machines with a GPU).
os.environ.setdefault("USARSIM_EGL", "0")
