"""Test-wide settings."""
import os

# Cameras in tests render with TinyRenderer: loading the EGL plugin costs every Simulator 0.5 s.
os.environ.setdefault("USARSIM_EGL", "0")
