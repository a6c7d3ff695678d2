"""Generated visual meshes, handed to PyBullet as OBJ files.

PyBullet's EGL renderer (used where a GPU exists) crashes on a visual mesh given as vertex
lists (``createVisualShape(GEOM_MESH, vertices=...)``) but loads the same mesh from a file,
as the TinyRenderer does. Files are named by their content in a per-user cache folder, so a
world's many equal boxes share one file and a second run writes nothing.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Sequence

import pybullet as p

Vec3 = tuple[float, float, float]


def cache_dir() -> Path:
    """The folder of generated mesh files (made on first use)."""
    user = getattr(os, "getuid", lambda: 0)()
    path = Path(tempfile.gettempdir()) / f"usarsim-meshes-{user}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def obj_text(vertices: Sequence[Vec3], indices: Sequence[int], uvs: Sequence[tuple[float, float]] | None = None,
             normals: Sequence[Vec3] | None = None) -> str:
    """Wavefront OBJ of a triangle mesh with optional per-vertex texture coordinates and normals."""
    lines = [f"v {x:.9g} {y:.9g} {z:.9g}" for x, y, z in vertices]
    lines += [f"vt {u:.9g} {v:.9g}" for u, v in uvs or ()]
    lines += [f"vn {x:.9g} {y:.9g} {z:.9g}" for x, y, z in normals or ()]
    if uvs and normals:
        corner = "{0}/{0}/{0}"
    elif uvs:
        corner = "{0}/{0}"
    elif normals:
        corner = "{0}//{0}"
    else:
        corner = "{0}"
    for k in range(0, len(indices) - 2, 3):  # OBJ counts from 1
        lines.append("f " + " ".join(corner.format(i + 1) for i in indices[k:k + 3]))
    return "\n".join(lines) + "\n"


def mesh_file(text: str) -> Path:
    """The cached file holding ``text`` (written once, atomically: parallel runs may share the folder)."""
    folder = cache_dir()
    path = folder / f"{hashlib.sha1(text.encode()).hexdigest()}.obj"
    if not path.exists():
        fd, scratch = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.replace(scratch, path)
    return path


def mesh_visual(client: int, vertices: Sequence[Vec3], indices: Sequence[int],
                uvs: Sequence[tuple[float, float]] | None = None, normals: Sequence[Vec3] | None = None,
                rgba: Sequence[float] | None = None) -> int:
    """A visual shape of the triangle mesh, loaded from its OBJ file."""
    extra = {"rgbaColor": list(rgba)} if rgba is not None else {}
    return p.createVisualShape(p.GEOM_MESH, fileName=str(mesh_file(obj_text(vertices, indices, uvs, normals))),
                               physicsClientId=client, **extra)


__all__ = ["cache_dir", "mesh_file", "mesh_visual", "obj_text"]
