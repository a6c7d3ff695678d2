"""ROS 2 front door: reading -> message conversion (``convert``) and the bridge node (``node``).

Importing this package needs only the message packages; ``usarsim.ros.node`` needs rclpy.
"""
