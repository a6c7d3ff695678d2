"""`colcon build` of the package in a fresh workspace installs what `ros2 launch`/`ros2 run` look for."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from patience import PATIENCE

ROOT = Path(__file__).resolve().parents[2]
SHARED = ("launch", "config", "urdf", "worlds")


def _colcon() -> Path:
    """colcon beside this interpreter (the test extras install it), else a system one."""
    beside = Path(sys.executable).with_name("colcon")
    found = beside if beside.exists() else shutil.which("colcon")
    assert found, "colcon is installed with the test extras (pip install -e '.[test]')"
    return Path(found)


def _shipped(top: str) -> list[str]:
    return sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / top).rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts)


def test_colcon_build_installs_share_and_executables(tmp_path: Path) -> None:
    colcon = _colcon()
    src = tmp_path / "src"
    src.mkdir()
    (src / "usarsim").symlink_to(ROOT, target_is_directory=True)  # a workspace checkout of this repository
    env = dict(os.environ, PATH=f"{colcon.parent}{os.pathsep}{os.environ.get('PATH', '')}",
               COLCON_HOME=str(tmp_path / "colcon_home"), COLCON_LOG_LEVEL="warning")
    result = subprocess.run(
        [str(colcon), "--log-base", str(tmp_path / "log"), "build", "--base-paths", str(src),
         "--build-base", str(tmp_path / "build"), "--install-base", str(tmp_path / "install"),
         "--packages-select", "usarsim", "--event-handlers", "console_direct-"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=PATIENCE)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

    prefix = tmp_path / "install" / "usarsim"
    share = prefix / "share" / "usarsim"
    assert (share / "package.xml").is_file()
    assert (prefix / "share" / "ament_index" / "resource_index" / "packages" / "usarsim").is_file(), \
        "the ament index marker lets ros2 find the package"
    for top in SHARED:
        shipped = _shipped(top)
        assert shipped, f"{top}/ ships files"
        installed = sorted(p.relative_to(share).as_posix() for p in (share / top).rglob("*") if p.is_file())
        assert installed == shipped, f"share/usarsim/{top} mirrors {top}/"
    assert (share / "launch" / "arena.launch.py").is_file()
    for script in ("usarsim", "usarsim_node"):
        exe = prefix / "lib" / "usarsim" / script
        assert exe.is_file() and os.access(exe, os.X_OK), f"lib/usarsim/{script} (for ros2 run)"
    site = list(prefix.glob("lib/python3*/site-packages"))
    assert site and (site[0] / "usarsim" / "sim" / "simulator.py").is_file(), "the Python package"
    # The installed script runs the installed package (as after `source install/setup.bash`).
    ament = os.pathsep.join(filter(None, [str(prefix), os.environ.get("AMENT_PREFIX_PATH")]))
    run_env = dict(os.environ, PYTHONPATH=str(site[0]), AMENT_PREFIX_PATH=ament)
    listed = subprocess.run([str(prefix / "lib" / "usarsim" / "usarsim"), "worlds"], env=run_env,
                            capture_output=True, text=True, timeout=PATIENCE)
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert "yellow" in listed.stdout
    # colcon's environment hooks: sourcing the workspace puts the package on AMENT_PREFIX_PATH
    assert (prefix / "share" / "usarsim" / "package.dsv").is_file() or (prefix / "share" / "usarsim" / "hook").is_dir()
