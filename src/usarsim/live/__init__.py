"""Live view without ROS: the simulator streamed to Foxglove through the Foxglove SDK's WebSocket server."""
