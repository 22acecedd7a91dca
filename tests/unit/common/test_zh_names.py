"""Proper names of Chinese questions for the coverage gate's look-up (jieba part-of-speech tags)."""

from __future__ import annotations

import pytest
from weaverbird_common.zh_names import chinese_names


@pytest.mark.parametrize(
    ("question", "names"),
    [
        # jieba cuts an unknown company into pieces; the name-like piece is kept.
        ("德必集团目前多少项目属于旧楼改造？", ["德必"]),
        # Latin words of three letters or more count; people and companies come before places.
        ("亚马逊以多少美元收购iRobot的交易引发了欧盟的深入调查?", ["亚马逊", "iRobot"]),
        ("达志科技计划在湖南省衡阳市祁东县建设锂离子电池项目", ["达志", "锂离子", "湖南省", "衡阳市", "祁东县"]),
        # Exchange suffixes (two letters) and one-character pieces are not names.
        ("盛屯矿业（600711.SH）的钴产品处于盈亏平衡状态吗？", ["盛屯"]),
        ("What was 3M's revenue in 2018?", []),  # English questions have their own rule
        # Latin words in a Chinese question are names only when capitalised.
        ("Northwind Robotics 2024财年的net profit是多少？", ["Northwind", "Robotics"]),
        ("2023年三季度全国铁路发送旅客人次增长多少？", []),
    ],
)
def test_chinese_names(question: str, names: list[str]) -> None:
    assert chinese_names(question) == names
