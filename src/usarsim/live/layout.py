"""The Foxglove layout of the live view (``config/foxglove_layout.json``), built with the SDK's layout classes.

Regenerate the file after changing the topics: ``python -m usarsim.live.layout > config/foxglove_layout.json``.
"""
from __future__ import annotations

from foxglove.layouts import (BaseRendererLaserScanTopicSettings, BaseRendererSceneUpdateTopicSettings,
                              ImageConfig, ImageModeConfig, ImagePanel, Layout, RawMessagesPanel, RawMessagesConfig,
                              SplitContainer, SplitItem, ThreeDeeConfig, ThreeDeePanel)

from usarsim.live.view import WORLD_FRAME


def build_layout() -> Layout:
    """3D view of /world, /robots, /trails, /markers and /scan in the world frame; the camera; raw /tf."""
    scene = {topic: BaseRendererSceneUpdateTopicSettings(visible=True)
             for topic in ("/world", "/robots", "/trails", "/markers")}
    three_d = ThreeDeePanel(title="Arena", config=ThreeDeeConfig(
        fixed_frame=WORLD_FRAME, follow_tf=WORLD_FRAME, follow_mode="follow-none",
        topics={**scene, "/scan": BaseRendererLaserScanTopicSettings(
            visible=True, point_size=4.0, decay_time=0.0, color_mode="flat",
            flat_color="#ff3030ff")}))
    camera = ImagePanel(title="Camera", config=ImageConfig(
        image_mode=ImageModeConfig(image_topic="/camera/image", image_schema_name="foxglove.RawImage")))
    transforms = RawMessagesPanel(title="TF", config=RawMessagesConfig(topic_path="/tf"))
    right = SplitContainer(direction="column", items=[SplitItem(proportion=2, content=camera),
                                                      SplitItem(proportion=1, content=transforms)])
    return Layout(content=SplitContainer(direction="row", items=[SplitItem(proportion=2, content=three_d),
                                                                 SplitItem(proportion=1, content=right)]))


if __name__ == "__main__":
    import json

    print(json.dumps(json.loads(build_layout().to_json()), indent=1))
