#!/usr/bin/env python3
"""One robot controller that talks to another over the simulated radio (docs/wireless.md).

Standard library only (and ``client_exit.py`` beside it). It spawns a P2AT on the protocol port (3000), registers with the
Wireless Communication Server (5874) and listens for links on ``--link-port``. With
``--peer`` it asks the server to open a link to that robot (the server then connects to
both robots' link ports) and sends it a numbered message every second while driving,
printing the signal GETSS reports; both print what they receive. Start the simulator
(``scripts/serve.sh``), then in two terminals:

    python3 examples/wireless_client.py --name R1 --start Start1 --link-port 6001
    python3 examples/wireless_client.py --name R2 --start Start2 --link-port 6002 --peer R1:6001 --drive 2

When the signal falls below the cut-off (walls, distance) the link is closed ("link
closed"); the sender then tries to open a new one ("Fail: Cannot connect to R1;" until
the robots hear each other again).
"""
from __future__ import annotations

import argparse
import socket
import sys
import threading
import time

from client_exit import connect, run_client


def command(sock: socket.socket, text: str) -> str:
    """Send a WSS control command; return its reply (up to ';')."""
    sock.sendall(text.encode() + b";")
    reply = b""
    while not reply.endswith(b";"):
        chunk = sock.recv(1)
        if not chunk:
            raise ConnectionError("the WSS closed the control connection")
        reply += chunk
    return reply.decode()


class Links:
    """The link connections the server opens to this robot's link port."""

    def __init__(self, name: str, port: int) -> None:
        self.name = name
        self.listener = socket.create_server(("127.0.0.1", port))
        self.current: socket.socket | None = None
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            link, _ = self.listener.accept()
            self.current = link
            threading.Thread(target=self._read, args=(link,), daemon=True).start()

    def _read(self, link: socket.socket) -> None:
        while True:
            try:
                data = link.recv(4096)
            except OSError:
                data = b""
            if not data:
                print(f"[{self.name}] link closed", flush=True)
                if self.current is link:
                    self.current = None
                return
            print(f"[{self.name}] received {data!r}", flush=True)

    def send(self, payload: bytes) -> bool:
        link = self.current
        if link is None:
            return False
        try:
            link.sendall(b"SEND %d " % len(payload) + payload + b";")
        except OSError:
            return False
        return True


def peer_address(text: str) -> tuple[str, int]:
    """argparse type of --peer NAME:PORT."""
    name, _, port = text.rpartition(":")
    if not name or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected NAME:PORT, e.g. R1:6001, got {text!r}")
    return name, int(port)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", required=True)
    parser.add_argument("--start", default="Start1", help="start pose tag")
    parser.add_argument("--link-port", type=int, required=True, help="where this robot accepts its links")
    parser.add_argument("--peer", type=peer_address, help="NAME:PORT of the robot to link to and send to")
    parser.add_argument("--drive", type=float, default=0.0, help="wheel speed, rad/s")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3000)
    parser.add_argument("--wss-port", type=int, default=5874)
    args = parser.parse_args()

    robot = connect(args.host, args.port, "protocol server", timeout=None)
    robot.sendall(f"INIT {{ClassName USARBot.P2AT}} {{Name {args.name}}} {{Start {args.start}}}\r\n".encode())
    threading.Thread(target=lambda: [None for _ in iter(lambda: robot.recv(65536), b"")], daemon=True).start()
    time.sleep(1.5)  # the robot is in the next link update

    links = Links(args.name, args.link_port)
    control = connect(args.host, args.wss_port, "wireless communication server", timeout=None)
    print(f"[{args.name}] REGISTER -> {command(control, f'REGISTER {args.name} {args.host}')}", flush=True)
    print(f"[{args.name}] LISTEN -> {command(control, f'LISTEN {args.name} {args.link_port}')}", flush=True)
    robot.sendall(f"DRIVE {{Left {args.drive}}} {{Right {args.drive}}}\r\n".encode())
    deadline, n = time.monotonic() + args.seconds, 0
    while time.monotonic() < deadline:
        if args.peer:
            peer, port = args.peer
            print(f"[{args.name}] GETSS -> {command(control, f'GETSS {args.name} {peer}')}", flush=True)
            if links.current is None:
                print(f"[{args.name}] OPEN -> {command(control, f'OPEN {peer} {port} {args.name} {args.link_port}')}",
                      flush=True)
                time.sleep(0.2)
            n += 1
            if links.send(f"message {n} from {args.name}".encode()):
                print(f"[{args.name}] sent message {n}", flush=True)
        time.sleep(1.0)
    robot.close()
    control.close()


if __name__ == "__main__":
    sys.exit(run_client(main, "wireless_client"))
