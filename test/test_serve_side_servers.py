"""Which wireless and ground-truth servers ``usarsim serve`` starts, on which ports."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from usarsim.cli import build_parser
from usarsim.protocol.cli import _side_servers
from usarsim.protocol.truth_server import TruthServer
from usarsim.protocol.udk_wss import UdkWirelessServer
from usarsim.protocol.wss import WirelessServer

PROTOCOL = SimpleNamespace(port=3000, image_server=SimpleNamespace(port=5003))


def sides(*argv: str) -> dict:
    args = build_parser().parse_args(["serve", *argv])
    return _side_servers(args, sim=None, server=PROTOCOL)  # type: ignore[arg-type]


def test_default_is_the_3_1_3_server_on_5874_and_no_ground_truth():
    (wss,) = sides().values()
    assert isinstance(wss, WirelessServer) and wss.port == 5874
    assert wss.reserved_ports == {3000, 5003}  # OPEN never reaches the simulator's own doors


def test_udk_dialect_listens_on_50000_unless_told_otherwise():
    (udk,) = sides("--wss-dialect", "udk").values()
    assert isinstance(udk, UdkWirelessServer) and udk.port == 50000
    (udk,) = sides("--wss-dialect", "udk", "--wss-port", "6000").values()
    assert udk.port == 6000
    assert sides("--wss-dialect", "udk", "--wss-port", "-1") == {}


def test_ground_truth_is_off_unless_asked_for_and_on_loopback_by_default():
    truth = [s for s in sides("--truth-port", "3989").values() if isinstance(s, TruthServer)]
    assert len(truth) == 1 and truth[0].port == 3989 and truth[0].host == "127.0.0.1"
    truth = [s for s in sides("--truth-port", "3989", "--host", "0.0.0.0").values() if isinstance(s, TruthServer)]
    assert truth[0].host == "127.0.0.1"  # --host alone does not expose it
    (wss, truth_server) = sides("--truth-port", "3989", "--truth-host", "0.0.0.0").values()
    assert truth_server.host == "0.0.0.0" and wss.reserved_ports == {3000, 5003, 3989}


@pytest.mark.parametrize("bad", [["--wss-dialect", "ut3"], ["--truth-port", "70000"]])
def test_bad_values_are_refused(bad, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", *bad])
    assert "error" in capsys.readouterr().err
