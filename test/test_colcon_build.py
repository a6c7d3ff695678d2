"""`colcon build` of the package installs its resources where `ros2 launch` looks for them."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ("launch", "config", "urdf", "worlds")


def test_colcon_build_installs_share_and_executables(tmp_path):
    colcon = Path(sys.executable).with_name("colcon")
    assert colcon.exists(), "colcon is installed with the test extras (pip install -e '.[test]')"
    src = tmp_path / "src"
    src.mkdir()
    (src / "usarsim").symlink_to(ROOT)
    env = dict(os.environ, PATH=f"{colcon.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    result = subprocess.run(
        [str(colcon), "--log-base", str(tmp_path / "log"), "build", "--base-paths", str(src),
         "--build-base", str(tmp_path / "build"), "--install-base", str(tmp_path / "install")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    prefix = tmp_path / "install" / "usarsim"
    share = prefix / "share" / "usarsim"
    assert (share / "package.xml").is_file()
    assert (prefix / "share" / "ament_index" / "resource_index" / "packages" / "usarsim").is_file()
    for top in SHARED:
        shipped = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / top).rglob("*")
                         if p.is_file() and "__pycache__" not in p.parts)
        assert shipped, f"{top}/ ships files"
        installed = sorted(p.relative_to(share).as_posix() for p in (share / top).rglob("*") if p.is_file())
        assert installed == shipped
    for script in ("usarsim", "usarsim_node"):
        assert (prefix / "lib" / "usarsim" / script).is_file(), f"lib/usarsim/{script} (for ros2 run)"
    site = list(prefix.glob("lib/python3*/site-packages/usarsim/sim/simulator.py"))
    assert site, "the Python package is installed"
    shutil.rmtree(tmp_path / "build", ignore_errors=True)
