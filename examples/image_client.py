#!/usr/bin/env python3
"""Save camera frames from the USARSim image server as PNG files.

Standard library + Pillow. The exchange (see docs/protocol.md, "Image server"):
the server sends a frame as 1 byte ImageType (0 raw, 1..5 JPEG), 4 bytes
big-endian size, then the data (raw: 2+2 bytes big-endian width and height and
RGB rows; JPEG: a JPEG file); the client answers ``OK`` for the next one.

Run the simulator and spawn a robot with a camera first (``usarsim serve``, then
``INIT {ClassName USARBot.P2AT} {Name R1} {Start Start1}`` from ``usarsim console``), then:

    python3 examples/image_client.py --count 5 --out frames/
    python3 examples/image_client.py --robot R1 --camera Camera   # choose the camera first

With ``--robot`` the client asks the protocol server (port 3000) to send this
image connection that robot's camera: ``SET {Type Camera} {Robot R1} {Name Camera}
{Client <this client's address>}``.
"""
from __future__ import annotations

import argparse
import io
import socket
import struct
import sys
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from client_exit import ClientError, connect, run_client

HEADER = struct.Struct(">BI")  # ImageType, ImageSize


def read_exactly(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the image server closed the connection")
        data += chunk
    return bytes(data)


def read_frame(sock: socket.socket) -> tuple[int, Image.Image]:
    """One frame: its ImageType and the picture."""
    image_type, size = HEADER.unpack(read_exactly(sock, HEADER.size))
    data = read_exactly(sock, size)
    if image_type == 0:
        width, height = struct.unpack(">HH", data[:4])
        return image_type, Image.frombytes("RGB", (width, height), data[4:])
    return image_type, Image.open(io.BytesIO(data)).convert("RGB")


def select_camera(host: str, port: int, robot: str, camera: str | None) -> str:
    """Ask the protocol server to send this machine's image connections that camera; returns its RES line."""
    with connect(host, port, "protocol server") as sock:
        lines = sock.makefile("rb")
        client_ip = sock.getsockname()[0]  # the address the server sees this machine connect from
        name = f" {{Name {camera}}}" if camera else ""
        sock.sendall(f"SET {{Type Camera}} {{Robot {robot}}}{name} {{Client {client_ip}}}\r\n".encode())
        while True:
            line = lines.readline().decode("ascii", "replace").strip()
            if not line:
                raise ConnectionError("the protocol server closed the connection")
            if line.startswith(("RES", "ERR")):
                return line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5003, help="image server port (default 5003)")
    parser.add_argument("--protocol-port", type=int, default=3000, help="protocol port, for --robot (default 3000)")
    parser.add_argument("--robot", help="receive this robot's camera (SET {Type Camera} ... {Client ip})")
    parser.add_argument("--camera", help="camera name on --robot (default: its first camera)")
    parser.add_argument("--count", type=int, default=3, help="frames to save (default 3)")
    parser.add_argument("--out", default="frames", help="folder for frame_NNN.png (default frames/)")
    args = parser.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.robot:  # before connecting, so that even the first frame is from that camera
        reply = select_camera(args.host, args.protocol_port, args.robot, args.camera)
        print(reply)
        if "{Status OK}" not in reply:
            return 1
    with connect(args.host, args.port, "image server", timeout=30) as sock:
        sock.sendall(b"OK")  # a server that waits for a request (UDK style) starts now
        for n in range(args.count):
            try:
                image_type, picture = read_frame(sock)
            except (ValueError, UnidentifiedImageError) as exc:
                raise ClientError(f"frame {n} is not an image: {exc}") from None
            path = out / f"frame_{n:03d}.png"
            picture.save(path)
            print(f"{path}: {picture.width}x{picture.height}, ImageType {image_type}")
            sock.sendall(b"OK")
    return 0


if __name__ == "__main__":
    sys.exit(run_client(main, "image_client"))
