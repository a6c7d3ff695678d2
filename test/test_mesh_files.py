"""Generated visual meshes go to PyBullet as OBJ files (its EGL renderer crashes on vertex lists)."""
import subprocess
import sys
import textwrap

import pybullet as p

from usarsim.sim.mesh_files import mesh_file, mesh_visual, obj_text
from patience import PATIENCE

QUAD = [(-1.0, -1.0, 0.0), (1.0, -1.0, 0.0), (1.0, 1.0, 0.0), (-1.0, 1.0, 0.0)]
TRIANGLES = [0, 1, 2, 0, 2, 3]


def test_obj_text_counts_from_one_and_names_each_corner_attribute():
    text = obj_text(QUAD, TRIANGLES, uvs=[(0, 0), (1, 0), (1, 1), (0, 1)])
    assert text.count("\nv ") + text.startswith("v ") == 4 and text.count("vt ") == 4
    assert "f 1/1 2/2 3/3\nf 1/1 3/3 4/4\n" in text
    assert "f 1//1 2//2 3//3" in obj_text(QUAD, TRIANGLES, normals=[(0, 0, 1)] * 4)
    assert "f 1 2 3" in obj_text(QUAD, TRIANGLES)


def test_equal_meshes_share_one_file_and_load_as_that_file():
    text = obj_text(QUAD, TRIANGLES)
    assert mesh_file(text) == mesh_file(text) and mesh_file(text).read_text() == text
    client = p.connect(p.DIRECT)
    try:
        visual = mesh_visual(client, QUAD, TRIANGLES, rgba=(1, 0, 0, 1))
        body = p.createMultiBody(0, -1, visual, physicsClientId=client)
        shape = p.getVisualShapeData(body, physicsClientId=client)[0]
        assert shape[4].decode() == str(mesh_file(text)) and tuple(shape[7]) == (1.0, 0.0, 0.0, 1.0)
    finally:
        p.disconnect(client)


def test_a_textured_arena_renders_with_the_egl_renderer():
    """Built with vertex-list meshes, yellow crashed the EGL plugin (segfault) where it loads."""
    script = textwrap.dedent("""
        from usarsim.sim.simulator import Simulator
        with Simulator("yellow", seed=1, render={"egl": True}) as sim:
            if not sim.env.render_options.get("egl"):
                print("no EGL")
            else:
                camera = next(s for s in sim.spawn("P2AT", "R1").sensors if s.type_name == "Camera")
                print("rendered", len(camera.render()))
        """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=PATIENCE)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "rendered 230400" in run.stdout or "no EGL" in run.stdout
