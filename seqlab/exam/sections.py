"""Every section of the three course notes, as the notes' headings number them.

Tags follow docs/DESIGN.md and the solutions' docstrings:

- ``W8 §5.2``                    Week 8 notes (000_49bd1f39577b5bc7.txt), heading "5.2 ..."
- ``L5 §3.4``                    Lecture 5 notes (002_61c847691412abfc.txt), heading "3.4 ..."
- ``L7-8 (Lecture 7) §二.3``     Lectures 7-8 notes (001_3b5c93688d8c0691.txt), Lecture 7's
                                 part "二、", item "3." (parts are numbered 一、二、... per lecture)

Question tags and coverage (docs/coverage.md) use these strings; ``expand`` turns a citation
as written in a docstring (``L5 §7.1-§7.5``, ``W8 §11.1, §15.1``, ``L7-8 (Lecture 7) §二.1-2``)
into the tags it names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NOTE_FILES = {
    "W8": "000_49bd1f39577b5bc7.txt",
    "L7-8": "001_3b5c93688d8c0691.txt",
    "L5": "002_61c847691412abfc.txt",
}


@dataclass(frozen=True)
class Section:
    tag: str  # "W8 §5.2"
    note: str  # "W8"
    number: str  # "5.2" or "7:二.3" (lecture:part.item) for L7-8
    heading: str  # the heading as it appears in the notes

    @property
    def parent(self) -> str | None:
        if "." not in self.number:
            return None
        return self.number.rsplit(".", 1)[0]

    @property
    def depth(self) -> int:
        return self.number.count(".")


_W8 = """\
0|本章核心目标与“进化树”
1|Recap：优化与正则化
1.1|SGD 的三个问题
1.2|Momentum：用历史梯度平滑更新
1.3|AdaGrad：每个参数自适应学习率
1.4|RMSProp：修复 AdaGrad 步长衰减过快
1.5|Adam：Momentum + RMSProp + Bias Correction
2|RNN：为什么需要序列模型？
2.1|Vanilla Neural Network 的局限
2.2|RNN 的核心思想：hidden state
3|RNN 的计算图与任务类型
3.1|Many-to-many
3.2|Many-to-one
3.3|One-to-many
4|Character-level Language Model
5|Seq2Seq：Encoder-Decoder 架构
5.1|基本结构
5.2|核心瓶颈：fixed-length context vector
6|RNN + Attention：解决 context bottleneck
6.1|从固定 context 到动态 context
6.2|图像 captioning 中的 attention
6.3|Soft attention vs hard attention
7|NLP 中的 Attention：机器翻译
8|General Attention Layer：从任务技巧到通用神经网络层
8.1|把图像 attention 抽象成向量集合 attention
8.2|Dot-product attention
8.3|多个 query
9|Key-Value-Query：Attention 的核心抽象
10|Self-Attention
10.1|定义
10.2|Self-attention 的优势
10.3|Self-attention 的问题：没有顺序
11|Positional Encoding
11.1|为什么需要位置编码？
11.2|Learned positional embedding
11.3|Sinusoidal positional encoding
12|Masked Self-Attention
13|Multi-Head Attention
13.1|定义
13.2|为什么需要多头？
14|RNN vs Transformer
15|Transformer Encoder
15.1|Encoder 输入
15.2|Encoder block 结构
15.3|Encoder 中各组件的作用
16|Transformer Decoder
16.1|Decoder 输入输出
16.2|Decoder block 结构
17|Image Captioning using Transformer
18|本章方法论演进总结
19|期末高频考点速记"""

_L5 = """\
0|本章核心目标
1|为什么需要 RNN？
1.1|序列任务类型
2|Vanilla RNN 结构与公式
2.1|基本更新方程
2.2|概率解释与 Loss
3|BPTT：Backpropagation Through Time
3.1|为什么叫 Through Time？
3.2|Softmax + Cross Entropy 梯度
3.3|输出层参数梯度
3.4|Hidden State 梯度递推
3.5|(W, U, b) 的梯度
4|Output Recurrence 与 Teacher Forcing
5|梯度消失与梯度爆炸
5.1|线性 RNN 情况
5.2|非线性 RNN 情况
6|缓解梯度问题的方法
6.1|Gradient Clipping：解决爆炸
6.2|Identity Initialization + ReLU：缓解消失
7|LSTM：Long Short-Term Memory
7.1|LSTM 总公式
7.2|Forget Gate
7.3|Input Gate 与 Candidate State
7.4|Cell State Update
7.5|Output Gate
8|GRU：Gated Recurrent Unit
8.1|Reset Gate 的直觉
8.2|Update Gate 的直觉
9|LSTM vs GRU
10|Bidirectional RNN
11|Deep Bidirectional RNN
12|Encoder-Decoder Seq2Seq
13|Attention Mechanism
13.1|Decoder 预测公式
13.2|Context Vector
13.3|Attention Weight
14|RNN 的问题与向 Transformer 演进
15|Scaled Dot-Product Attention
16|Multi-Head Attention
17|Transformer
18|从 Transformer 到 SSM / Mamba
18.1|RNN → SSM → Mamba
18.2|Selective Mechanism
18.3|为什么 Mamba 可以并行化？
19|总结对比表
20|期末复习抓重点"""

_L78 = """\
7:一|RNN 核心架构与模式
7:一.1|经典输入/输出模式
7:一.2|核心前向传播公式
7:二|训练与梯度计算（Training & Backpropagation）
7:二.1|损失计算
7:二.2|时间反向传播（Backpropagation Through Time, BPTT）
7:二.3|截断式时间反向传播（Truncated BPTT）
7:三|输入处理：嵌入层（Embedding Layer）
7:四|RNN 的优缺点与梯度问题
7:五|关键变体：LSTM（长短期记忆网络）
7:五.1|三大门控与细胞状态
7:五.2|缓解梯度消失的核心原理
7:六|深入对比：LSTM 的“传送带”与 ResNet 的“跳跃连接”
7:七|总结与现代演进
8:一|Attention 机制的起源与引入
8:一.1|经典 Attention（以 Additive/Bahdanau Attention 为例）计算步骤
8:二|从 RNN 中抽象出的通用注意力算子（Attention Layer）
8:二.1|核心概念（Q, K, V）
8:二.2|缩放点积注意力（Scaled Dot-Product Attention）计算过程
8:三|注意力机制的主要形式与变体
8:四|Transformer 神经网络架构
8:四.1|整体模块组成与数据流向
8:五|RNN 与 Transformer 的全面对比"""


def _tag(note: str, number: str) -> str:
    if note == "L7-8":
        lecture, rest = number.split(":", 1)
        return f"L7-8 (Lecture {lecture}) §{rest}"
    return f"{note} §{number}"


def _load() -> dict[str, Section]:
    out: dict[str, Section] = {}
    for note, table in (("W8", _W8), ("L5", _L5), ("L7-8", _L78)):
        for line in table.splitlines():
            number, heading = line.split("|", 1)
            tag = _tag(note, number)
            out[tag] = Section(tag=tag, note=note, number=number, heading=heading)
    return out


SECTIONS: dict[str, Section] = _load()


def children(tag: str) -> list[str]:
    """``tag`` and every section below it, in order."""
    sec = SECTIONS[tag]
    prefix = sec.number + "."
    return [
        t for t, s in SECTIONS.items() if s.note == sec.note and (s.number == sec.number or s.number.startswith(prefix))
    ]


_NUMERALS = "一二三四五六七八九十"
_CITE = re.compile(
    r"(?P<note>W8|L5|L7-8)(?:\s*\(Lecture\s*(?P<lecture>[78])\))?\s*"
    r"|§\s*(?P<num>[0-9一二三四五六七八九十]+(?:\.[0-9]+)*)(?:\s*-\s*§?\s*(?P<end>[0-9一二三四五六七八九十]+(?:\.[0-9]+)*))?"
)


def _siblings_between(note: str, start: str, end: str, lecture: str | None) -> list[str]:
    """Numbers from ``start`` to ``end`` inclusive (same level), e.g. 7.1..7.5, 2..4, 二.1..2."""
    head, _, last = start.rpartition(".")
    if "." not in end and head:
        end = f"{head}.{end}"  # "§二.1-2" -> 二.1 .. 二.2
    ehead, _, elast = end.rpartition(".")
    if head != ehead:
        return [start, end]

    def index(x: str) -> int:
        return _NUMERALS.index(x) + 1 if x in _NUMERALS else int(x)

    def unindex(i: int, like: str) -> str:
        return _NUMERALS[i - 1] if like in _NUMERALS else str(i)

    lo, hi = index(last), index(elast)
    return [f"{head}.{unindex(i, last)}" if head else unindex(i, last) for i in range(lo, hi + 1)]


def expand(text: str) -> list[str]:
    """The section tags a free-text citation names (parents include their subsections).

    A § without a note prefix belongs to the last note named (``W8 §11.1, §15.1``). Unknown
    numbers are ignored, so prose around the citations does no harm.
    """
    found: list[str] = []
    note: str | None = None
    lecture: str | None = None
    for m in _CITE.finditer(text):
        if m.group("note"):
            note, lecture = m.group("note"), m.group("lecture")
            continue
        if note is None:
            continue
        if note == "L7-8" and lecture is None:
            continue
        start, end = m.group("num"), m.group("end")
        numbers = _siblings_between(note, start, end, lecture) if end else [start]
        for number in numbers:
            if note == "L7-8":
                number = f"{lecture}:{number}"
            tag = _tag(note, number)
            if tag in SECTIONS:
                for t in children(tag):
                    if t not in found:
                        found.append(t)
    return found


def validate_tag(tag: str) -> None:
    if tag not in SECTIONS:
        raise KeyError(f"unknown notes section {tag!r} (see seqlab/exam/sections.py)")
