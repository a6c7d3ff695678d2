#!/usr/bin/env python3
"""Drive a P2AT in a square over the USARSim text protocol and print what its laser sees.

Standard library only (with ``client_exit.py`` beside it: one line, not a traceback, when the
server is not there or Ctrl-C stops it), so it shows what any controller has to do: connect to
TCP 3000, spawn with INIT, send DRIVE lines, read SEN/STA lines (``\\r\\n`` ended,
``TYPE {Name value} ...``). Run the simulator first (``scripts/serve.sh``), then:

    python3 examples/square_client.py --side 2
"""
from __future__ import annotations

import argparse
import math
import re
import socket
import sys
import time

from client_exit import connect, run_client

SEGMENT = re.compile(r"\{([^{}]*)\}")
WHEEL_RADIUS = 0.11  # P2AT (GETGEO {Type Robot} reports it as WheelRadius)


def parse(line: str) -> tuple[str, dict[str, str]]:
    """Message type and its name/value pairs (a later repeated name wins)."""
    kind, _, rest = line.partition(" ")
    pairs: dict[str, str] = {}
    for segment in SEGMENT.findall(rest):
        words = segment.split()
        pairs.update(zip(words[0::2], words[1::2]))
    return kind, pairs


class Robot:
    """One protocol connection owning one robot."""

    def __init__(self, host: str, port: int) -> None:
        self.sock = connect(host, port, "protocol server")
        self.buffer = b""
        self.pending: list[str] = []  # complete lines not handed out yet
        self.position: tuple[float, float] | None = None  # from the GroundTruth / INS lines
        self.yaw = 0.0

    def send(self, line: str) -> None:
        self.sock.sendall(line.encode("ascii") + b"\r\n")

    def lines(self, seconds: float):
        """Yield every line received during the next ``seconds``."""
        deadline = time.monotonic() + seconds
        while True:
            while self.pending:  # kept across calls: a caller may stop reading mid-chunk
                yield self.pending.pop(0)
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                return
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buffer += chunk
            *complete, self.buffer = self.buffer.split(b"\r\n")
            self.pending.extend(raw.decode("ascii", "replace") for raw in complete)

    def watch(self, seconds: float, verbose: bool, done=lambda: False) -> bool:
        """Read for up to ``seconds``, tracking the pose and printing scans; True once ``done()`` holds."""
        for line in self.lines(seconds):
            kind, pairs = parse(line)
            if kind == "ERR":
                print("server:", line)
            elif kind == "SEN" and pairs.get("Type") == "INS":
                x, y, _ = (float(v) for v in pairs["Location"].split(","))
                self.position = (x, y)
                self.yaw = float(pairs["Orientation"].split(",")[2])
                if done():
                    return True
            elif kind == "SEN" and pairs.get("Type") == "RangeScanner" and verbose:
                ranges = [float(r) for r in pairs["Range"].split(",")]
                middle = len(ranges) // 2
                print(f"  laser: ahead {ranges[middle]:.2f} m, right {ranges[0]:.2f} m, "
                      f"left {ranges[-1]:.2f} m, nearest {min(ranges):.2f} m")
        return done()

    def forward(self, distance: float, speed: float) -> None:
        """Drive straight until the INS says ``distance`` metres are covered."""
        start = self.position or (0.0, 0.0)
        self.send(f"DRIVE {{Left {speed}}} {{Right {speed}}}")
        covered = lambda: self.position is not None and math.dist(self.position, start) >= distance  # noqa: E731
        if not self.watch(3.0 * distance / (speed * WHEEL_RADIUS) + 2.0, verbose=True, done=covered):
            print("  (stopped short: blocked?)")
        self.send("DRIVE {Left 0} {Right 0}")

    def turn_left(self, angle: float, speed: float) -> None:
        """Spin counter-clockwise seen from above until the INS yaw has changed by ``angle``.

        SAE frame (z down): positive yaw is clockwise, so a left turn makes the yaw fall
        and needs Right > Left.
        """
        start = self.yaw
        # Skid-steer wheels slip sideways while spinning, so the turn is closed on the INS yaw
        # instead of timed from the wheel geometry.
        self.send(f"DRIVE {{Left {-speed}}} {{Right {speed}}}")
        turned = lambda: (start - self.yaw) % (2 * math.pi) >= angle - 0.03  # noqa: E731
        self.watch(15.0, verbose=False, done=turned)
        self.send("DRIVE {Left 0} {Right 0}")
        self.watch(0.3, verbose=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3000)
    parser.add_argument("--side", type=float, default=2.0, help="side of the square (m)")
    parser.add_argument("--start", default="Start1", help="start pose tag (GETSTARTPOSES lists them)")
    parser.add_argument("--speed", type=float, default=3.0, help="wheel speed (rad/s)")
    args = parser.parse_args()

    robot = Robot(args.host, args.port)
    robot.send("GETSTARTPOSES")
    robot.send(f"INIT {{ClassName USARBot.P2AT}} {{Name Square}} {{Start {args.start}}}")
    robot.watch(1.0, verbose=False)
    for leg in range(4):
        print(f"leg {leg + 1}: forward {args.side} m (pose {robot.position}, yaw {robot.yaw:.2f})")
        robot.forward(args.side, args.speed)
        robot.turn_left(math.pi / 2, args.speed / 2)  # the open side of the default start
    robot.send("DRIVE {Left 0} {Right 0}")
    robot.watch(0.5, verbose=False)
    print(f"back near the start: pose {robot.position}, yaw {robot.yaw:.2f}")
    robot.sock.close()


if __name__ == "__main__":
    sys.exit(run_client(main, "square_client"))
