"""Snapshot of a live view: connect to ``usarsim ... --live`` as a Foxglove WebSocket client, decode what
arrives (protobuf, with the schemas the server announces) and draw it top-down into a PNG.

    .venv/bin/python examples/live_snapshot.py --port 8765 --seconds 3 --output live.png

Needs ``websockets`` and ``protobuf`` (the test extra). This draws the same messages Foxglove Studio
receives; it is not Foxglove's renderer.
"""
from __future__ import annotations

import argparse
import base64
import json
import math
import sys
import time

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.json_format import MessageToDict
from PIL import Image, ImageDraw
from websockets.exceptions import WebSocketException
from websockets.sync.client import connect

from client_exit import ClientError, run_client

SCALE = 60  # pixels per metre
MARGIN = 1.0  # metres around the arena


def decoders(channels: list[dict]) -> dict[int, type]:
    """Message class per channel id, built from the protobuf FileDescriptorSets in the advertisement."""
    pool = descriptor_pool.DescriptorPool()
    out = {}
    for channel in channels:
        files = descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode(channel["schema"]))
        for proto in files.file:
            try:
                pool.Add(proto)
            except TypeError:  # already added by another channel
                pass
        out[channel["id"]] = message_factory.GetMessageClass(pool.FindMessageTypeByName(channel["schemaName"]))
    return out


def collect(port: int, seconds: float) -> dict[str, list[dict]]:
    """The latest messages per topic received in ``seconds``, decoded to dicts."""
    latest: dict[str, list[dict]] = {}
    with connect(f"ws://127.0.0.1:{port}", subprotocols=["foxglove.sdk.v1"], max_size=None) as ws:
        channels: dict[int, dict] = {}
        end = time.monotonic() + seconds
        subscribed: dict[int, int] = {}
        classes: dict[int, type] = {}
        while time.monotonic() < end:
            try:
                frame = ws.recv(timeout=0.2)
            except TimeoutError:
                continue
            if isinstance(frame, str):
                message = json.loads(frame)
                if message["op"] == "advertise":
                    fresh = [c for c in message["channels"] if c["id"] not in channels]
                    channels.update({c["id"]: c for c in fresh})
                    classes.update(decoders(fresh))
                    subs = [{"id": len(subscribed) + i, "channelId": c["id"]} for i, c in enumerate(fresh)]
                    subscribed.update({s["id"]: s["channelId"] for s in subs})
                    ws.send(json.dumps({"op": "subscribe", "subscriptions": subs}))
            elif frame[0] == 1:
                channel_id = subscribed[int.from_bytes(frame[1:5], "little")]
                decoded = classes[channel_id].FromString(frame[13:])
                topic = channels[channel_id]["topic"]
                as_dict = MessageToDict(decoded, preserving_proto_field_name=True)
                if topic == "/camera/image":
                    as_dict["raw"] = decoded.data
                latest.setdefault(topic, []).append(as_dict)
    return latest


def rotation(q: dict) -> np.ndarray:
    x, y, z, w = (q.get(k, 0.0) for k in "xyzw")
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def vec(d: dict) -> np.ndarray:
    return np.array([d.get("x", 0.0), d.get("y", 0.0), d.get("z", 0.0)])


def frame_poses(tf_messages: list[dict]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """World pose of every frame, from the latest transforms (parents resolved up to 'world')."""
    edges = {}
    for message in tf_messages:
        for t in message.get("transforms", []):
            edges[t["child_frame_id"]] = (t["parent_frame_id"], vec(t["translation"]), rotation(t["rotation"]))
    poses = {"world": (np.zeros(3), np.eye(3))}

    def resolve(frame: str) -> tuple[np.ndarray, np.ndarray] | None:
        if frame in poses:
            return poses[frame]
        if frame not in edges:
            return None
        parent, t, r = edges[frame]
        up = resolve(parent)
        if up is None:
            return None
        poses[frame] = (up[0] + up[1] @ t, up[1] @ r)
        return poses[frame]

    for frame in list(edges):
        resolve(frame)
    return poses


def draw(latest: dict[str, list[dict]], output: str) -> None:
    arena = [e for m in latest.get("/world", [])[-1:] for e in m.get("entities", [])]
    cubes = [(e["id"], c) for e in arena for c in e.get("cubes", [])]
    xs = [vec(c["pose"]["position"])[0] for _, c in cubes] or [0.0]
    ys = [vec(c["pose"]["position"])[1] for _, c in cubes] or [0.0]
    lo = np.array([min(xs) - MARGIN, min(ys) - MARGIN])
    hi = np.array([max(xs) + MARGIN, max(ys) + MARGIN])
    # top-down with north (x) up and west (y) to the left, as a map of the core frame
    width, height = int((hi[1] - lo[1]) * SCALE), int((hi[0] - lo[0]) * SCALE)
    image = Image.new("RGB", (width + 360, max(height, 420)), (30, 30, 34))
    pen = ImageDraw.Draw(image)

    def px(point: np.ndarray) -> tuple[float, float]:
        return ((hi[1] - point[1]) * SCALE, (hi[0] - point[0]) * SCALE)

    def footprint(primitive: dict, fill: tuple[int, ...]) -> None:
        centre, rot = vec(primitive["pose"]["position"]), rotation(primitive["pose"].get("orientation", {}))
        size = vec(primitive["size"])
        corners = [centre + rot @ (np.array([sx, sy, 0.0]) * size / 2) for sx, sy in ((1, 1), (1, -1), (-1, -1), (-1, 1))]
        pen.polygon([px(c) for c in corners], fill=fill)

    def colour(primitive: dict) -> tuple[int, int, int]:
        c = primitive.get("color", {})
        return tuple(int(255 * c.get(k, 0.0)) for k in ("r", "g", "b"))

    floor = True
    for _entity_id, cube in cubes:
        footprint(cube, (70, 70, 66) if floor else colour(cube))
        floor = False
    for entity in arena:
        for sphere in entity.get("spheres", []) + entity.get("cylinders", []):
            footprint(sphere, colour(sphere))
        for triangles in entity.get("triangles", []):
            origin = vec(triangles["pose"]["position"])
            rot = rotation(triangles["pose"].get("orientation", {}))
            points = [px(origin + rot @ vec(p)) for p in triangles.get("points", [])]
            for i in range(0, len(points) - 2, 3):
                pen.polygon(points[i:i + 3], fill=colour(triangles))
    for message in latest.get("/trails", [])[-1:]:
        for entity in message.get("entities", []):
            for line in entity.get("lines", []):
                pen.line([px(vec(p)) for p in line.get("points", [])], fill=(0, 210, 80), width=3)
    for message in latest.get("/robots", [])[-1:]:
        for entity in message.get("entities", []):
            for primitive in entity.get("cubes", []) + entity.get("cylinders", []):
                footprint(primitive, (240, 200, 40))
    poses = frame_poses(latest.get("/tf", []))
    for scan in latest.get("/scan", [])[-1:]:
        pose = poses.get(scan["frame_id"])
        if pose is None:
            continue
        ranges = scan.get("ranges", [])
        start, end = scan.get("start_angle", 0.0), scan.get("end_angle", 0.0)
        for i, r in enumerate(ranges):
            a = start + (end - start) * i / max(1, len(ranges) - 1)
            hit = pose[0] + pose[1] @ np.array([r * math.cos(a), r * math.sin(a), 0.0])
            x, y = px(hit)
            pen.ellipse((x - 2, y - 2, x + 2, y + 2), fill=(255, 50, 50))
    for message in latest.get("/markers", [])[-1:]:
        for entity in message.get("entities", []):
            pose = poses.get(entity["frame_id"])
            for sphere in entity.get("spheres", []) if pose is not None else []:
                x, y = px(pose[0] + pose[1] @ vec(sphere["pose"]["position"]))
                pen.ellipse((x - 7, y - 7, x + 7, y + 7), outline=(255, 255, 255), width=2)
    camera = latest.get("/camera/image", [])[-1:]
    if camera:
        c = camera[0]
        frame = Image.frombytes("RGB", (c["width"], c["height"]), c["raw"])
        image.paste(frame, (width + 20, 20))
        pen.text((width + 20, 25 + c["height"]), f"/camera/image  {c['frame_id']}", fill=(220, 220, 220))
    lines = [f"{topic}: {len(messages)} messages" for topic, messages in sorted(latest.items())]
    pen.text((width + 20, 300), "received over ws:// (Foxglove SDK server)\n" + "\n".join(lines), fill=(220, 220, 220))
    image.save(output)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--output", default="live.png")
    args = parser.parse_args()
    try:
        latest = collect(args.port, args.seconds)
    except (OSError, WebSocketException) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise ClientError(f"cannot read the live view at ws://127.0.0.1:{args.port}: {reason} "
                          "(start one with usarsim serve --live)") from None
    draw(latest, args.output)
    print(f"{args.output}: " + ", ".join(f"{t} x{len(m)}" for t, m in sorted(latest.items())))


if __name__ == "__main__":
    sys.exit(run_client(main, "live_snapshot"))
