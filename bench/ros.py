"""Benchmark of the ROS 2 bridge (prints figures, asserts nothing).

1. Publish overhead: one P2AT in `yellow`, lockstep, every topic on (camera rendering too), the
   bridge attached, a reliable subscriber (the default QoS) on every topic. Time spent in the
   bridge's per-tick listener (convert and queue, /clock at 50 Hz, TF) as a fraction of the whole
   tick, the tick time with and without the bridge (CPU time of the stepping thread, so other load
   on the machine does not count), and the CPU time of the bridge's publishing thread per tick
   (serialisation and DDS, off the tick; it needs a second core to stay off the critical path).
2. End-to-end latency: usarsim_node in another process (realtime pacing); this process subscribes
   to the LaserScan (reliable). Latency = wall time the scan arrives here - wall time its tick finished
   there (the child records tick end times per sim time; both processes read the same clock).

    .venv/bin/python bench/ros.py [--ticks 2000] [--seconds 8]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# CPU time of the stepping thread: figures stay meaningful on a machine shared with other work
CPU = time.thread_time


def _quantiles(values: list[float]) -> str:
    values = sorted(values)
    pick = lambda q: values[min(len(values) - 1, int(q * len(values)))]  # noqa: E731
    return (f"mean {statistics.fmean(values):.2f}  p50 {pick(0.5):.2f}  p90 {pick(0.9):.2f}  "
            f"p99 {pick(0.99):.2f}  max {values[-1]:.2f} ms (n={len(values)})")


def overhead(ticks: int, cameras: bool, subscribed: bool = True) -> None:
    import rclpy
    from rclpy.parameter import Parameter
    from rclpy.qos import QoSProfile
    from rosgraph_msgs.msg import Clock

    from usarsim.ros import convert
    from usarsim.ros.node import TF_QOS, UsarsimNode
    from usarsim.sim.simulator import Simulator

    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=random.randint(100, 160))
    sim = Simulator("yellow", pacing="lockstep")
    try:
        robot = sim.spawn("P2AT", "bot")
        for sensor in robot.sensors:
            if sensor.type_name == "Camera":
                sensor.active = cameras
        sim.step(50)
        start = CPU()
        sim.step(ticks)
        bare = (CPU() - start) / ticks
        node = UsarsimNode(sim=sim, context=ctx,
                           parameter_overrides=[Parameter("cameras", value="on" if cameras else "off")])
        if subscribed:  # a (not spinning) subscriber on every topic, so nothing is skipped as unheard
            listener = rclpy.create_node("bench_all_topics", context=ctx)
            names = node._bridges["bot"].names
            for topic, msg_type in [*convert.expected_topics(robot.spec, names), ("/clock", Clock)]:
                listener.create_subscription(msg_type, topic, lambda m: None, QoSProfile(depth=10))  # reliable
            listener.create_subscription(convert.TFMessage, "/tf", lambda m: None, TF_QOS)
            time.sleep(1.0)  # discovery
        spent = [0.0]
        inner = node._on_tick

        def timed(now, readings):  # the node's own listener, timed
            t0 = CPU()
            inner(now, readings)
            spent[0] += CPU() - t0

        sim.remove_listener(inner)
        sim.add_listener(timed)
        sim.step(50)
        node._queue.flush()
        publisher_clock = time.pthread_getcpuclockid(node._queue.thread.ident)
        spent[0] = 0.0
        start, publisher_start = CPU(), time.clock_gettime(publisher_clock)
        sim.step(ticks)
        bridged = (CPU() - start) / ticks
        node._queue.flush(timeout=60.0)
        publishing = (time.clock_gettime(publisher_clock) - publisher_start) / ticks
        publish = spent[0] / ticks
        label = "all topics, camera rendering" if cameras else "all topics but the camera"
        if not subscribed:
            label = "no subscribers (only /clock and /tf built)"
        print(f"[{label}] tick without bridge {bare * 1e3:.3f} ms, with bridge {bridged * 1e3:.3f} ms; "
              f"bridge listener {publish * 1e3:.3f} ms/tick = {100 * publish / bridged:.1f} % of the tick "
              f"({100 * (bridged - bare) / bare:+.1f} % tick time); publishing thread {publishing * 1e3:.3f} ms/tick "
              f"({100 * publishing / bridged:.1f} % of a tick, on another core)")
        node.close()
        node.destroy_node()
    finally:
        sim.close()
        rclpy.shutdown(context=ctx)


def child(record: str) -> None:
    """Run usarsim_node (realtime) and write sim time -> wall time of every tick to ``record`` at exit."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter

    from usarsim.ros.node import UsarsimNode
    from usarsim.sim.simulator import Simulator

    rclpy.init()
    sim = Simulator("yellow", pacing="realtime")
    ticks: dict[str, float] = {}
    sim.add_listener(lambda now, readings: ticks.__setitem__(f"{now:.3f}", time.time()))  # before the bridge's
    node = UsarsimNode(sim=sim, parameter_overrides=[Parameter("robots", value=["bot:P2AT"]),
                                                     Parameter("cameras", value="off")])
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    sim.start()
    try:
        executor.spin()
    except BaseException:  # noqa: BLE001 - Ctrl-C / shutdown: write what we have
        pass
    finally:
        node.close()
        executor.shutdown()
        node.destroy_node()
        sim.close()
        rclpy.try_shutdown()
        Path(record).write_text(json.dumps(ticks))


def latency(seconds: float) -> None:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile
    from sensor_msgs.msg import LaserScan

    domain = random.randint(100, 160)
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    record = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    proc = subprocess.Popen([sys.executable, __file__, "--child", record], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain)
    node = rclpy.create_node("bench_listener", context=ctx)
    arrivals: list[tuple[float, float]] = []
    node.create_subscription(LaserScan, "/bot/scan", lambda m: arrivals.append(
        (m.header.stamp.sec + m.header.stamp.nanosec * 1e-9, time.time())), QoSProfile(depth=10))
    executor = SingleThreadedExecutor(context=ctx)
    executor.add_node(node)
    deadline = time.monotonic() + 30
    while not arrivals and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.1)
    arrivals.clear()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.1)
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown(context=ctx)
    proc.send_signal(2)
    proc.wait(timeout=20)
    ticks = json.loads(Path(record).read_text())
    os.unlink(record)
    lat = [(wall - ticks[f"{stamp:.3f}"]) * 1e3 for stamp, wall in arrivals if f"{stamp:.3f}" in ticks]
    if not lat:
        print("latency: no LaserScan received")
        return
    print(f"tick -> LaserScan in another process: {_quantiles(lat)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=2000, help="ticks per overhead measurement")
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds of scans for the latency")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    print(f"usarsim ROS bridge benchmark ({os.cpu_count()} CPUs)")
    overhead(args.ticks, cameras=False)
    overhead(args.ticks, cameras=True)
    overhead(args.ticks, cameras=False, subscribed=False)
    latency(args.seconds)


if __name__ == "__main__":
    main()
