"""``usarsim console HOST PORT``: an interactive test console for the text protocol.

Like the manual's USAR_UI: type protocol lines and they are sent as typed (a line end is
added); what the server sends is printed, except the periodic messages hidden by the
filter (SEN, STA and MISSTA at first, so replies are not lost in a flood of laser
lines). Lines starting with ``/`` are for the console itself (``/help``). Line editing,
history (kept in ``~/.usarsim_console_history``) and completion come from readline.
With standard input not a terminal, the lines read from it are sent one after the other
and the console exits ``--wait`` seconds after the last one.
"""
from __future__ import annotations

import argparse
import re
import socket
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TextIO

STREAMS = ("SEN", "STA", "MISSTA")  # periodic messages, hidden at first
COMMAND_WORDS = ("INIT", "DRIVE", "MULTIDRIVE", "MISPKG", "SET", "GETGEO", "GETCONF", "GETSTARTPOSES",
                 "CAMERA", "TRACE")
CONSOLE_COMMANDS = ("/show", "/hide", "/filters", "/history", "/wait", "/help", "/quit")
HISTORY_FILE = Path.home() / ".usarsim_console_history"
HELP = """console commands:
  /show KIND [TYPE ...]   print KIND messages (SEN, STA, MISSTA, ...), or only those of the TYPEs
  /hide KIND [TYPE ...]   stop printing KIND messages, or those of the TYPEs
  /filters                what is shown and hidden
  /history [N]            the last N lines typed (default 20)
  /wait KIND [SECONDS]    wait until a KIND message arrives, shown or not (e.g. /wait STA after INIT)
  /quit                   leave (so do Ctrl-D and Ctrl-C)
anything else is sent to the server as typed, e.g.
  GETSTARTPOSES                                          the start poses of this world (Start1, ...)
  INIT {ClassName USARBot.P2AT} {Name R1} {Start Start1}  spawn a P2AT at one of them
  DRIVE {Left 2.0} {Right 2.0}                           wheel speeds in rad/s"""
_TYPE = re.compile(r"\{Type\s+([^\s{}]+)")


@dataclass
class _Rule:
    """Which messages of one kind are printed: every type, none, or a set in or out."""

    mode: str = "all"  # all | none | only | except
    types: set[str] = field(default_factory=set)

    def passes(self, message_type: str | None) -> bool:
        if self.mode in ("all", "none"):
            return self.mode == "all"
        listed = message_type in self.types
        return listed if self.mode == "only" else not listed

    def describe(self) -> str:
        if self.mode in ("all", "none"):
            return "shown" if self.mode == "all" else "hidden"
        names = ", ".join(sorted(self.types))
        return f"only {names}" if self.mode == "only" else f"all but {names}"


class MessageFilter:
    """Decides which received lines are printed, by message kind and ``{Type}``."""

    def __init__(self, hidden: tuple[str, ...] = STREAMS) -> None:
        self._rules: dict[str, _Rule] = {kind: _Rule("none") for kind in hidden}

    def passes(self, line: str) -> bool:
        kind = line.split(" ", 1)[0].upper()
        rule = self._rules.get(kind)
        if rule is None:
            return True
        found = _TYPE.search(line)
        return rule.passes(found.group(1) if found else None)

    def show(self, kind: str, types: tuple[str, ...] = ()) -> None:
        """Print messages of ``kind`` (only those of ``types`` if given, on top of those shown)."""
        self._set(kind, types, ("all", "none", "only", "except"))

    def hide(self, kind: str, types: tuple[str, ...] = ()) -> None:
        """Stop printing messages of ``kind`` (only those of ``types`` if given)."""
        self._set(kind, types, ("none", "all", "except", "only"))

    def _set(self, kind: str, types: tuple[str, ...], modes: tuple[str, str, str, str]) -> None:
        # show and hide are mirror images: modes = (every type, no type, listed ones, all but listed)
        every, _, listed, unlisted = modes
        rule = self._rules.setdefault(kind.upper(), _Rule())
        if not types:
            rule.mode, rule.types = every, set()
        elif rule.mode == unlisted:
            rule.types -= set(types)
            if not rule.types:
                rule.mode = every
        elif rule.mode != every:
            rule.types = (rule.types if rule.mode == listed else set()) | set(types)
            rule.mode = listed

    def describe(self) -> str:
        parts = [f"{kind} {rule.describe()}" for kind, rule in sorted(self._rules.items()) if rule.mode != "all"]
        return "; ".join(parts) if parts else "everything shown"


class Console:
    """One connection: a reader thread prints what passes the filter; ``handle`` takes typed lines."""

    def __init__(self, sock: socket.socket, out: TextIO, interactive: bool) -> None:
        self.sock = sock
        self.out = out
        self.interactive = interactive
        self.filter = MessageFilter()
        self.history: list[str] = []
        self.closed = threading.Event()
        self._seen = threading.Condition()
        self._seen_counts: dict[str, int] = {}  # message kind -> lines received
        self._print_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read_loop, name="console-reader", daemon=True)

    def start(self) -> None:
        self._reader.start()

    def _read_loop(self) -> None:
        try:
            for raw in self.sock.makefile("rb"):
                line = raw.decode("ascii", "replace").rstrip("\r\n")
                with self._seen:
                    kind = line.split(" ", 1)[0].upper()
                    self._seen_counts[kind] = self._seen_counts.get(kind, 0) + 1
                    self._seen.notify_all()
                if self.filter.passes(line):
                    self.print(line)
        except OSError:
            pass
        finally:
            if not self.closed.is_set():
                self.print("(the server closed the connection)")
            self.closed.set()

    def print(self, text: str) -> None:
        """Print above the prompt, keeping what the user is typing."""
        with self._print_lock:
            if self.interactive and threading.current_thread() is self._reader:  # the prompt is showing
                import readline

                self.out.write(f"\r\x1b[K{text}\n{PROMPT}{readline.get_line_buffer()}")
            else:
                self.out.write(text + "\n")
            self.out.flush()

    def handle(self, line: str) -> bool:
        """One typed line; False to leave."""
        line = line.strip()
        if not line:
            return True
        self.history.append(line)
        if line.startswith("/"):
            return self._console_command(line)
        try:
            self.sock.sendall(line.encode("ascii", "replace") + b"\r\n")
        except OSError as exc:
            self.print(f"(not sent: {exc})")
            return False
        return True

    def _console_command(self, line: str) -> bool:
        word, *args = line.split()
        word = word.lower()
        if word == "/quit":
            return False
        if word in ("/show", "/hide") and args:
            getattr(self.filter, word[1:])(args[0], tuple(args[1:]))
            self.print(f"({self.filter.describe()})")
        elif word == "/filters":
            self.print(f"({self.filter.describe()})")
        elif word == "/wait" and args:
            self._wait_for(args[0].upper(), float(args[1]) if len(args) > 1 and _is_number(args[1]) else 10.0)
        elif word == "/history":
            count = int(args[0]) if args and args[0].isdigit() else 20
            for n, typed in enumerate(self.history[-count:], start=max(1, len(self.history) - count + 1)):
                self.print(f"{n:4d}  {typed}")
        else:
            self.print(HELP)
        return True

    def _wait_for(self, kind: str, seconds: float) -> None:
        with self._seen:
            before = self._seen_counts.get(kind, 0)
            if not self._seen.wait_for(lambda: self._seen_counts.get(kind, 0) > before or self.closed.is_set(),
                                       seconds):
                self.print(f"(no {kind} within {seconds:g} s)")

    def close(self) -> None:
        self.closed.set()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


PROMPT = "usarsim> "


def _is_number(text: str) -> bool:
    try:
        return float(text) >= 0
    except ValueError:
        return False


def _setup_readline() -> Callable[[], None]:
    """History and completion; returns what saves the history at the end."""
    try:
        import readline
    except ImportError:  # not every Python build has it: plain input() still works
        return lambda: None
    try:
        readline.read_history_file(HISTORY_FILE)
    except OSError:
        pass
    readline.set_history_length(1000)
    words = COMMAND_WORDS + CONSOLE_COMMANDS + STREAMS

    def complete(text: str, state: int) -> str | None:
        matches = [w + " " for w in words if w.lower().startswith(text.lower())]
        return matches[state] if state < len(matches) else None

    readline.set_completer(complete)
    readline.set_completer_delims(" \t{}")
    readline.parse_and_bind("tab: complete")

    def save() -> None:
        try:
            readline.write_history_file(HISTORY_FILE)
        except OSError:
            pass

    return save


def run_console(host: str, port: int, *, show_all: bool = False, wait: float = 1.0,
                stdin: TextIO = sys.stdin, out: TextIO = sys.stdout) -> int:
    """Connect and run until /quit, end of input or the server leaving; returns the exit status."""
    try:
        sock = socket.create_connection((host, port), timeout=10)
    except OSError as exc:
        print(f"usarsim console: cannot connect to {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    sock.settimeout(None)
    interactive = stdin.isatty() and out.isatty()
    console = Console(sock, out, interactive)
    if show_all:
        for kind in STREAMS:
            console.filter.show(kind)
    save_history = _setup_readline() if interactive else (lambda: None)
    if interactive:
        out.write(f"connected to {host}:{port}; {console.filter.describe()} (/show SEN to see them); "
                  f"/help for console commands\n")
    console.start()
    try:
        while not console.closed.is_set():
            try:
                line = input(PROMPT) if interactive else stdin.readline()
            except EOFError:
                break
            if not interactive and not line:
                console.closed.wait(wait)  # replies to the last lines
                break
            if not console.handle(line):
                break
    except KeyboardInterrupt:
        pass
    finally:
        save_history()
        console.close()
        if interactive:
            out.write("\n")
    return 0


def add_subcommand(subparsers: "argparse._SubParsersAction") -> None:
    """Register ``console`` on the ``usarsim`` command line."""
    parser = subparsers.add_parser("console", help="interactive test console for the text protocol (like USAR_UI)")
    parser.add_argument("host", nargs="?", default="127.0.0.1", help="server address (default 127.0.0.1)")
    parser.add_argument("port", nargs="?", type=int, default=3000, help="protocol port (default 3000)")
    parser.add_argument("--all", action="store_true", help="also print SEN, STA and MISSTA from the start")
    parser.add_argument("--wait", type=float, default=1.0,
                        help="with input from a pipe or file: seconds to wait for replies after the last line")
    parser.set_defaults(func=lambda args: run_console(args.host, args.port, show_all=args.all, wait=args.wait))


__all__ = ["Console", "MessageFilter", "add_subcommand", "run_console"]
