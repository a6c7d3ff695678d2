"""What Nav2 needs from the bridge, proven without Nav2: the TF tree in the robot's namespace and a goal reached
by a test-only controller that plans on the shipped map and drives through TF and TwistStamped as Nav2 would."""
import heapq
import math
from pathlib import Path

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("tf2_msgs.msg")

from geometry_msgs.msg import TwistStamped  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import LaserScan  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from bridge_process import BridgeProcess  # noqa: E402
from test_nav_files import SHARE, load_map  # noqa: E402
from usarsim.sim.world import load_world  # noqa: E402
from patience import PATIENCE  # noqa: E402

ROBOT = "scout"
INFLATION_M = 0.35  # robot radius: cells closer than this to an obstacle are not planned through

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


@pytest.fixture(scope="module")
def nav_bridge(tmp_path_factory):
    """The bridge as `arena.launch.py nav:=true` starts it."""
    b = BridgeProcess(tmp_path_factory.mktemp("nav") / "node.log",
                      ["world:=yellow", f"robots:=['{ROBOT}:P2AT:Start1']", "multi_robot:=true",
                       "publish_map_to_odom:=true", "cmd_vel_stamped:=true", "rates.odom:=20.0", "cmd_vel_timeout:=0.5"])
    b.listen(TFMessage, f"/{ROBOT}/tf", QoSProfile(depth=200), key="tf")
    b.listen(TFMessage, f"/{ROBOT}/tf_static", LATCHED, key="tf_static")
    try:
        yield b
    finally:
        b.close()


class TfBuffer:
    """The latest transform of every (parent, child) pair, composed along the tree (yaw and translation only)."""

    def __init__(self, bridge):
        self.bridge = bridge

    def edges(self):
        out = {}
        for key in ("tf_static", "tf"):
            for msg in self.bridge.messages(key):
                for t in msg.transforms:
                    out[t.child_frame_id] = t
        return out

    def chain(self, target, source):
        """parent chain from ``source`` up to ``target`` (None if they are not connected)."""
        edges, path, frame = self.edges(), [], source
        while frame != target:
            if frame not in edges:
                return None
            path.append(edges[frame])
            frame = edges[frame].header.frame_id
        return path

    def pose2d(self, target, source):
        """(x, y, yaw) of ``source`` in ``target``."""
        x = y = yaw = 0.0
        for t in self.chain(target, source):
            tr, q = t.transform.translation, t.transform.rotation
            a = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
            x, y = tr.x + math.cos(a) * x - math.sin(a) * y, tr.y + math.sin(a) * x + math.cos(a) * y
            yaw += a
        return x, y, yaw


def test_tf_tree_has_what_nav2_needs(nav_bridge):
    tf = TfBuffer(nav_bridge)
    scans = nav_bridge.listen(LaserScan, f"/{ROBOT}/scan", QoSProfile(depth=5))
    assert nav_bridge.wait_for(lambda: nav_bridge.messages(scans) and tf.chain("map", "base_footprint")
                               and tf.chain("map", nav_bridge.messages(scans)[-1].header.frame_id)), \
        nav_bridge.log_tail()
    frames = [t.header.frame_id for t in tf.chain("map", "base_link")]
    assert frames == ["odom", "map"], "map -> odom -> base_link (REP-105)"
    x, y, _ = tf.pose2d("map", "base_link")
    start = load_world("yellow").start_poses[0].xyz
    assert (x, y) == pytest.approx(start[:2], abs=0.05), "map is the world frame the shipped map is drawn in"


def plan(free: np.ndarray, meta: dict, start: tuple[float, float], goal: tuple[float, float]) -> list[tuple[float, float]]:
    """A* on the inflated grid, 8-connected; waypoints in metres (every 4th cell, 0.2 m apart, and the goal)."""
    res, (ox, oy, _) = meta["resolution"], meta["origin"]
    r = int(math.ceil(INFLATION_M / res))
    blocked = ~free
    inflated = blocked.copy()
    for dr in range(-r, r + 1):
        for dc in range(-r, r + 1):
            if dr * dr + dc * dc <= r * r:
                inflated |= np.roll(np.roll(blocked, dr, axis=0), dc, axis=1)

    def cell(p):
        return int((p[1] - oy) / res), int((p[0] - ox) / res)

    s, g = cell(start), cell(goal)
    assert not inflated[g], "the goal is in free space"
    inflated[s] = False
    came, cost, todo = {s: None}, {s: 0.0}, [(0.0, s)]
    while todo:
        _, cur = heapq.heappop(todo)
        if cur == g:
            break
        for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)):
            nxt = (cur[0] + dr, cur[1] + dc)
            if not (0 <= nxt[0] < free.shape[0] and 0 <= nxt[1] < free.shape[1]) or inflated[nxt]:
                continue
            c = cost[cur] + math.hypot(dr, dc)
            if c < cost.get(nxt, math.inf):
                cost[nxt], came[nxt] = c, cur
                heapq.heappush(todo, (c + math.hypot(g[0] - nxt[0], g[1] - nxt[1]), nxt))
    assert g in came, "the shipped map has a path"
    cells, cur = [], g
    while cur is not None:
        cells.append(cur)
        cur = came[cur]
    cells.reverse()
    points = [(ox + (c + 0.5) * res, oy + (r_ + 0.5) * res) for r_, c in cells[::4]]
    return points + [goal]


def test_goal_reached_by_a_controller_following_the_shipped_map(nav_bridge):
    free, meta = load_map("yellow")
    tf = TfBuffer(nav_bridge)
    assert nav_bridge.wait_for(lambda: tf.chain("map", "base_link"))
    x, y, _ = tf.pose2d("map", "base_link")
    start = load_world("yellow").start_poses[0].xyz
    goal = (start[0] + 3.5, start[1] + 1.1)  # 3.7 m away, past the arena's inner wall end
    path = plan(free, meta, (x, y), goal)
    cmd_vel = nav_bridge.node.create_publisher(TwistStamped, f"/{ROBOT}/cmd_vel", 10)
    waypoint = iter(path)
    target = next(waypoint)

    def drive() -> bool:
        nonlocal target
        x, y, yaw = tf.pose2d("map", "base_link")
        # a waypoint let go of early cuts the corner the robot is rounding: into the wall end, where it can
        # ride up and tip over
        while math.hypot(target[0] - x, target[1] - y) < (0.25 if target == goal else 0.1):
            if target == goal:
                cmd_vel.publish(TwistStamped())
                return True
            target = next(waypoint)
        heading = math.atan2(target[1] - y, target[0] - x)
        error = math.atan2(math.sin(heading - yaw), math.cos(heading - yaw))
        msg = TwistStamped()
        msg.header.frame_id = "base_link"
        msg.twist.angular.z = max(-1.0, min(1.0, 2.0 * error))
        remaining = math.hypot(goal[0] - x, goal[1] - y)
        # turn on the spot first, like RPP; slow down on the last metre so a late TF cannot carry it past the goal
        msg.twist.linear.x = min(0.35, 0.3 * remaining + 0.05) if abs(error) < 0.5 else 0.0
        cmd_vel.publish(msg)
        return False

    assert nav_bridge.wait_for(drive, timeout=PATIENCE), f"stuck near {tf.pose2d('map', 'base_link')}, path {path}"
    from simulation_interfaces import srv

    truth = nav_bridge.call(srv.GetEntityState, "/get_entity_state", srv.GetEntityState.Request(entity=ROBOT))
    p = truth.state.pose.position
    assert math.hypot(p.x - goal[0], p.y - goal[1]) < 0.35, "ground truth agrees the goal was reached"


def test_scan_frame_is_in_the_robot_tree(nav_bridge):
    assert Path(SHARE / "config" / "nav2_params.yaml").is_file()
    tf = TfBuffer(nav_bridge)
    laser = [t for m in nav_bridge.messages("tf_static") for t in m.transforms if t.child_frame_id == "laser"]
    assert laser and tf.chain("base_link", "laser")
