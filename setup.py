"""ament_python package `usarsim` (src layout); also an ordinary pip-installable package."""
from pathlib import Path

from setuptools import find_packages, setup

PACKAGE = "usarsim"
ROOT = Path(__file__).resolve().parent
SHARED_DIRS = ("launch", "config", "urdf", "worlds")


def share_files() -> list[tuple[str, list[str]]]:
    """data_files entries installing launch/, config/, urdf/ and worlds/ into share/usarsim."""
    entries = [
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
    ]
    for top in SHARED_DIRS:
        by_dir: dict[str, list[str]] = {}
        for path in sorted((ROOT / top).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                rel = path.relative_to(ROOT)
                by_dir.setdefault(str(rel.parent), []).append(str(rel))
        entries += [(f"share/{PACKAGE}/{d}", files) for d, files in sorted(by_dir.items())]
    return entries


ROS_RUNTIME = [
    "ros-rclpy[fastrtps]",
    "ros-std-msgs",
    "ros-geometry-msgs",
    "ros-sensor-msgs",
    "ros-nav-msgs",
    "ros-rosgraph-msgs",
    "ros-trajectory-msgs",
    "ros-visualization-msgs",
    "rosbags",
]

# Sweeps on a Ray cluster (usarsim sweep --ray ADDRESS); in the test extra so that path is tested too.
# [client]: Ray Client (--ray ray://HEAD:10001, grpcio); [default]: the runtime-environment agent that
# unpacks the sweep's shipped files on each node, and `ray start`/`ray status` as the docs use them.
RAY = ["ray[default,client]>=2.9"]

# `colcon build` of this package is part of the test suite
COLCON = [
    "colcon-core",
    "colcon-ros",
    "colcon-python-setup-py",
    "colcon-recursive-crawl",
    "colcon-package-selection",
    "colcon-parallel-executor",
    "colcon-output",
]

setup(
    name=PACKAGE,
    version="0.1.0",
    description="USARSim, the Urban Search And Rescue robot simulator, on PyBullet with ROS 2",
    long_description=(ROOT / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="BSD-3-Clause",
    python_requires=">=3.10",
    package_dir={"": "src"},
    packages=find_packages("src"),
    data_files=share_files(),
    install_requires=[
        "pybullet>=3.2.5",
        "numpy",
        "pyyaml",
        "pymap3d",
        "transforms3d",
        "pillow",
        "tqdm",
        "setuptools",
        "pyarrow",  # sweep summary tables (CSV and Parquet from one typed table)
        "gymnasium",  # usarsim.gym environments
        "foxglove-sdk",  # live view (usarsim serve/run/sweep --live)
        "websockets>=13",  # the live view's front door: both Foxglove subprotocols, viewer limit, slow viewers
        "scipy",  # map flood fills and filters (usarsim map, usarsim arena) in C, not Python loops
        "osmium",  # pyosmium: maintained OpenStreetMap parser (libosmium) for `usarsim osm`
        "shapely",  # street blocks from road buffers and polygon triangulation (prism items)
        "wmm-calculator",  # NOAA's World Magnetic Model: declination, dip and strength at a world's coordinates (compass)
    ],
    extras_require={
        "ros": ROS_RUNTIME,
        "ray": RAY,
        # pytest-xdist: scripts/test.sh runs the suite on every core
        # protobuf: the live view's test client and docs/scale.md's snapshot tool decode its messages
        # mypy, ruff (and PyYAML's stubs): the type check and lint that scripts/test.sh runs first
        "test": ["pytest", "pytest-xdist", "hypothesis", "protobuf", "mypy", "ruff", "types-PyYAML", *RAY, *COLCON],
    },
    zip_safe=True,
    entry_points={
        "console_scripts": [
            "usarsim = usarsim.cli:main",
            "usarsim_node = usarsim.ros.entry:main",
        ],
    },
)
