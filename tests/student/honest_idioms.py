"""Honest idioms: code an honest student leaves in a hand-in, written blind from the student
release and the notes (without reading the graders or the subset), to measure false positives.

Each entry: name, module, where ("prelude" | "body"), target (body only), code, why, and
optionally needs_package=True (the snippet imports/calls the student's own modules or functions,
so it is only checked inside a real package, not in a bare namespace).
Entries whose ``why`` starts with "borderline:" are honest in my judgement but touch something a
rule might reasonably flag (process-global state, dynamic attribute access, sys.path, ...).
"""

IDIOMS = []


def P(name, module, code, why, **extra):
    IDIOMS.append(dict(name=name, module=module, where="prelude", code=code.strip("\n") + "\n", why=why, **extra))


def B(name, target, code, why, **extra):
    IDIOMS.append(
        dict(
            name=name,
            module=target.split(".")[0],
            where="body",
            target=target,
            code=code.strip("\n") + "\n",
            why=why,
            **extra,
        )
    )


# ---------------------------------------------------------------- preludes: debug leftovers
P(
    "stderr-debug-helper",
    "optimizers",
    r"""
import sys

DEBUG = False


def _dbg(*args, **kwargs):
    if DEBUG:
        print(*args, file=sys.stderr, **kwargs)
""",
    "a DEBUG flag and a print-to-stderr helper left from debugging",
)
P(
    "perf-counter-import-time",
    "rnn",
    r"""
import time

_IMPORT_T0 = time.perf_counter()
""",
    "timing how long the module takes to import",
)
P(
    "logger-getlogger",
    "attention",
    r"""
import logging

log = logging.getLogger(__name__)
""",
    "standard module logger",
)
P(
    "logger-nullhandler",
    "lstm_gru",
    r"""
import logging

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())
""",
    "library-style logger that stays silent",
)
P(
    "logging-basicconfig",
    "transformer",
    r"""
import logging

logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
log = logging.getLogger("seqlab.transformer")
""",
    "borderline: configures the root logger of the whole process at import time",
)
P(
    "warnings-filterwarnings",
    "lstm_gru",
    r"""
import warnings

warnings.filterwarnings("ignore", category=UserWarning, module="torch")
""",
    "borderline: silences torch UserWarnings process-wide at import time",
)
P(
    "warnings-warn-helper",
    "positional",
    r"""
import warnings


def _warn_odd(d_model):
    if d_model % 2:
        warnings.warn(f"odd d_model={d_model}: last column is a sine", stacklevel=2)
""",
    "helper that would warn about an unusual argument",
)
P(
    "pprint-import",
    "rnn",
    r"""
from pprint import pformat, pprint
""",
    "pprint imported to inspect grads dicts while debugging",
)
P(
    "traceback-in-helper",
    "selective_scan",
    r"""
import traceback


def _safe_shape(t):
    try:
        return tuple(t.shape)
    except AttributeError:
        traceback.print_exc()
        return None
""",
    "defensive helper that prints a traceback only if something is not a tensor",
)
P(
    "timing-contextmanager",
    "transformer",
    r"""
import contextlib
import time


@contextlib.contextmanager
def _timed(label, enabled=False):
    t0 = time.perf_counter()
    try:
        yield
    finally:
        if enabled:
            print(f"{label}: {time.perf_counter() - t0:.4f}s")
""",
    "a small contextmanager to time blocks while optimising",
)
P(
    "timing-decorator-wraps",
    "lstm_gru",
    r"""
import functools
import time

_TIMINGS = {}


def timed(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _TIMINGS[fn.__name__] = time.perf_counter() - t0
    return wrapper


@timed
def _identity(x):
    return x
""",
    "a timing decorator using functools.wraps and fn.__name__",
)
P(
    "debug-env-flag",
    "attention",
    r"""
import os

_DEBUG = os.environ.get("SEQLAB_DEBUG", "") == "1"
""",
    "borderline: reads an environment variable to switch debug output on",
)

# ---------------------------------------------------------------- helper classes
P(
    "class-super-init",
    "optimizers",
    r"""
class _Base:
    def __init__(self, lr):
        self.lr = lr


class _WithMomentum(_Base):
    def __init__(self, lr, momentum):
        super().__init__(lr)
        self.momentum = momentum
""",
    "small class hierarchy with super().__init__()",
)
P(
    "class-dunder-call",
    "rnn",
    r"""
class Cell:
    def __init__(self, W_xh, W_hh, b_h):
        self.W_xh, self.W_hh, self.b_h = W_xh, W_hh, b_h

    def __call__(self, x, h):
        return torch.tanh(x @ self.W_xh.T + h @ self.W_hh.T + self.b_h)
""",
    "callable cell object",
)
P(
    "class-repr-eq-hash",
    "attention",
    r"""
class HeadSpec:
    def __init__(self, num_heads, dim):
        self.num_heads, self.dim = num_heads, dim

    def __repr__(self):
        return f"{type(self).__name__}(num_heads={self.num_heads}, dim={self.dim})"

    def __eq__(self, other):
        return isinstance(other, HeadSpec) and (self.num_heads, self.dim) == (other.num_heads, other.dim)

    def __hash__(self):
        return hash((self.num_heads, self.dim))
""",
    "value object with __repr__/__eq__/__hash__",
)
P(
    "class-len-getitem-iter",
    "rnn",
    r"""
class _Seq:
    def __init__(self, x):
        self._x = x

    def __len__(self):
        return self._x.shape[1]

    def __getitem__(self, t):
        return self._x[:, t]

    def __iter__(self):
        return (self[t] for t in range(len(self)))

    def __contains__(self, t):
        return 0 <= t < len(self)
""",
    "sequence wrapper with __len__/__getitem__/__iter__/__contains__",
)
P(
    "class-property-setter",
    "optimizers",
    r"""
class _LR:
    def __init__(self, value):
        self._value = float(value)

    @property
    def value(self):
        return self._value

    @value.setter
    def value(self, v):
        if v <= 0:
            raise ValueError("learning rate must be positive")
        self._value = float(v)
""",
    "property with a validating setter",
)
P(
    "class-staticmethod-classmethod",
    "transformer",
    r"""
class _Norm:
    def __init__(self, weight, bias):
        self.weight, self.bias = weight, bias

    @classmethod
    def from_dict(cls, d):
        return cls(d["weight"], d["bias"])

    @staticmethod
    def moments(x):
        mu = x.mean(-1, keepdim=True)
        return mu, ((x - mu) ** 2).mean(-1, keepdim=True)
""",
    "alternate constructor and a static helper",
)
P(
    "class-name-mangled",
    "lstm_gru",
    r"""
class _Gates:
    def __init__(self, n):
        self.__n = n

    def split(self, t):
        return t.chunk(self.__n, dim=-1)
""",
    "private attribute with name mangling self.__n",
)
P(
    "class-private-underscore",
    "selective_scan",
    r"""
class _State:
    def __init__(self, d, n):
        self._d = d
        self._n = n

    @property
    def shape(self):
        return (self._d, self._n)
""",
    "single-underscore private attributes self._d",
)
P(
    "class-slots",
    "attention",
    r"""
class _Pair:
    __slots__ = ("q", "k")

    def __init__(self, q, k):
        self.q = q
        self.k = k
""",
    "__slots__ to keep a helper light",
)
P(
    "class-dunder-add-matmul",
    "selective_scan",
    r'''
class Affine:
    """x -> a * x + b; `f @ g` means g first, then f."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __matmul__(self, other):
        return Affine(self.a * other.a, self.a * other.b + self.b)

    def __call__(self, x):
        return self.a * x + self.b
''',
    "operator overloading for the scan's associative combine",
)
P(
    "class-bool-len",
    "optimizers",
    r"""
class _History:
    def __init__(self):
        self._items = []

    def __bool__(self):
        return bool(self._items)

    def __len__(self):
        return len(self._items)
""",
    "__bool__/__len__ on a tiny container",
)
P(
    "class-context-manager",
    "positional",
    r"""
class _Quiet:
    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        return False
""",
    "class-based context manager (__enter__/__exit__)",
)
P(
    "abc-abstractmethod",
    "lstm_gru",
    r"""
from abc import ABC, abstractmethod


class _RecurrentCell(ABC):
    @abstractmethod
    def step(self, x, state):
        ...

    def run(self, xs, state):
        out = []
        for x in xs:
            state = self.step(x, state)
            out.append(state)
        return out
""",
    "abstract base class for cells",
)
P(
    "class-dict-repr",
    "rnn",
    r"""
class _Config:
    def __init__(self, **kw):
        for key, value in kw.items():
            setattr(self, key, value)

    def __repr__(self):
        inner = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"_Config({inner})"
""",
    "borderline: setattr in a loop and self.__dict__ in __repr__ (dynamic attributes on own object)",
)
P(
    "class-init-subclass-registry",
    "optimizers",
    r"""
_RULES = {}


class _Rule:
    name = "base"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _RULES[cls.name] = cls


class _SGDRule(_Rule):
    name = "sgd"
""",
    "borderline: __init_subclass__ registry of helper classes",
)
P(
    "frozen-dataclass-post-init-setattr",
    "transformer",
    r"""
from dataclasses import dataclass


@dataclass(frozen=True)
class _BlockCfg:
    num_heads: int
    head_dim: int = 0

    def __post_init__(self):
        if self.num_heads <= 0:
            raise ValueError("num_heads must be positive")
        object.__setattr__(self, "head_dim", self.head_dim or 1)
""",
    "borderline: the standard object.__setattr__ trick inside a frozen dataclass's __post_init__",
)

# ---------------------------------------------------------------- typing
P(
    "future-annotations",
    "rnn",
    r"""
from __future__ import annotations
""",
    "students copy the header line; the stubs already have it (a __future__ import must stay at the top of the file)",
)
P(
    "typing-imports",
    "attention",
    r"""
from typing import Callable, Dict, List, Optional, Tuple
""",
    "typing names for annotations",
)
P(
    "tensor-annotated-helper",
    "transformer",
    r"""
from typing import Optional


def _maybe_and(a: Optional[torch.Tensor], b: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
    if a is None:
        return b
    if b is None:
        return a
    return a & b
""",
    "typed helper combining two optional masks",
)
P(
    "module-annotated-constants",
    "optimizers",
    r"""
EPS: float = 1e-8
DEFAULT_BETAS: tuple = (0.9, 0.999)
_KEYS: list[str] = ["m", "v"]
""",
    "annotated module-level assignments",
)
P(
    "typealias",
    "rnn",
    r"""
from typing import Dict, TypeAlias

Params: TypeAlias = Dict[str, torch.Tensor]
""",
    "PEP 613 type alias for the params dict",
)
P(
    "typing-protocol",
    "optimizers",
    r"""
from typing import Protocol


class UpdateRule(Protocol):
    def __call__(self, w: torch.Tensor, dw: torch.Tensor, state: dict) -> tuple: ...
""",
    "Protocol describing the optimizer signature",
)
P(
    "typing-namedtuple-class",
    "lstm_gru",
    r"""
from typing import NamedTuple


class LSTMState(NamedTuple):
    h: torch.Tensor
    c: torch.Tensor
""",
    "typed NamedTuple for (h, c)",
)
P(
    "typing-final",
    "positional",
    r"""
from typing import Final

BASE: Final[float] = 10000.0
""",
    "Final constant for the sinusoid base",
)
P(
    "typing-type-checking",
    "transformer",
    r"""
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor
""",
    "import only for type checkers",
)
P(
    "typing-union-optional-device",
    "attention",
    r"""
from typing import Optional, Union

DeviceLike = Optional[Union[str, torch.device]]
""",
    "alias for the device argument",
)
P(
    "typing-callable-alias",
    "selective_scan",
    r"""
from typing import Callable

Combine = Callable[[tuple, tuple], tuple]
""",
    "Callable alias for the combine operator",
)
P(
    "typing-overload",
    "rnn",
    r"""
from typing import overload


@overload
def _as_int(x: int) -> int: ...
@overload
def _as_int(x: torch.Tensor) -> int: ...
def _as_int(x):
    return int(x)
""",
    "typing.overload on a small converter",
)
P(
    "typing-literal",
    "transformer",
    r"""
from typing import Literal

NormPos = Literal["pre", "post"]
""",
    "Literal type for the norm position",
)
P(
    "pep604-annotations",
    "selective_scan",
    r"""
def _opt_add(x: torch.Tensor, y: torch.Tensor | None) -> torch.Tensor:
    return x if y is None else x + y
""",
    "X | None annotations (PEP 604)",
)

# ---------------------------------------------------------------- dataclasses / configs
P(
    "dataclass-frozen-config",
    "optimizers",
    r"""
from dataclasses import dataclass


@dataclass(frozen=True)
class AdamConfig:
    lr: float = 1e-3
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
""",
    "frozen dataclass for hyperparameters",
)
P(
    "dataclass-field-default-factory",
    "rnn",
    r"""
from dataclasses import dataclass, field


@dataclass
class _Trace:
    losses: list = field(default_factory=list)

    def add(self, value):
        self.losses.append(float(value))
""",
    "dataclass with a mutable default via field(default_factory)",
)
P(
    "dataclass-asdict-replace",
    "transformer",
    r"""
from dataclasses import asdict, dataclass, replace


@dataclass(frozen=True)
class _Cfg:
    eps: float = 1e-5
    norm_first: bool = False


_DEFAULT = _Cfg()
_PRE = replace(_DEFAULT, norm_first=True)
_AS_DICT = asdict(_PRE)
""",
    "dataclasses.replace/asdict on configs",
)
P(
    "dataclass-vars",
    "attention",
    r"""
from dataclasses import dataclass


@dataclass
class _MHA:
    num_heads: int
    embed_dim: int


_FIELDS = sorted(vars(_MHA(2, 8)))
""",
    "borderline: vars() on a dataclass instance",
)

# ---------------------------------------------------------------- functools / itertools / collections
P(
    "lru-cache-helper",
    "positional",
    r"""
import functools


@functools.lru_cache(maxsize=32)
def _inv_freq_list(d_model):
    return tuple(10000.0 ** (-(2 * i) / d_model) for i in range((d_model + 1) // 2))
""",
    "cached pure helper",
)
P(
    "functools-cache",
    "attention",
    r"""
from functools import cache


@cache
def _inv_sqrt(d):
    return 1.0 / math.sqrt(d)
""",
    "functools.cache on a scalar helper",
)
P(
    "functools-partial",
    "rnn",
    r"""
from functools import partial

_flip_time = partial(torch.flip, dims=(1,))
""",
    "partial application of torch.flip",
)
P(
    "functools-reduce",
    "optimizers",
    r"""
from functools import reduce
import operator


def _sum(xs):
    return reduce(operator.add, xs, 0.0)
""",
    "reduce with operator.add",
)
P(
    "itertools-helpers",
    "transformer",
    r"""
import itertools

_PAIRS = list(itertools.product(("pre", "post"), (True, False)))
_CHAIN = list(itertools.chain([1], [2, 3]))
""",
    "itertools.product/chain",
)
P(
    "itertools-pairwise-accumulate",
    "selective_scan",
    r"""
from itertools import accumulate, pairwise


def _levels(T):
    return list(accumulate([T] * max(T.bit_length() - 1, 0), lambda n, _: n // 2))


def _steps(xs):
    return [b - a for a, b in pairwise(xs)]
""",
    "itertools.accumulate/pairwise helpers",
)
P(
    "itertools-islice-count",
    "rnn",
    r"""
from itertools import count, islice


def _first(n, gen):
    return list(islice(gen, n))


_NATURALS = islice(count(), 3)
""",
    "islice/count",
)
P(
    "defaultdict-counter",
    "attention",
    r"""
from collections import Counter, defaultdict

_CALLS = defaultdict(int)
_SEEN = Counter()
""",
    "call counters",
)
P(
    "namedtuple",
    "lstm_gru",
    r"""
from collections import namedtuple

GRUGates = namedtuple("GRUGates", ["r", "z", "n"])
""",
    "collections.namedtuple for gates",
)
P(
    "ordereddict",
    "transformer",
    r"""
from collections import OrderedDict

_SUBLAYERS = OrderedDict([("self_attn", "norm1"), ("cross_attn", "norm2"), ("ffn", "norm3")])
""",
    "ordered mapping of sublayers to norms",
)
P(
    "deque",
    "rnn",
    r"""
from collections import deque

_recent_losses = deque(maxlen=10)
""",
    "ring buffer for recent losses",
)
P(
    "chainmap",
    "optimizers",
    r"""
from collections import ChainMap

_DEFAULTS = {"lr": 1e-3, "eps": 1e-8}


def _with_defaults(**kw):
    return dict(ChainMap(kw, _DEFAULTS))
""",
    "ChainMap over default hyperparameters",
)
P(
    "operator-itemgetter",
    "rnn",
    r"""
from operator import itemgetter

_cell_params = itemgetter("W_xh", "W_hh", "b_h")
""",
    "itemgetter to pull params from the dict",
)
P(
    "operator-matmul",
    "transformer",
    r"""
import operator

_mm = operator.matmul
""",
    "operator.matmul for a functional style",
)
P(
    "copy-deepcopy",
    "optimizers",
    r"""
import copy


def _copy_state(state):
    return copy.deepcopy(state)
""",
    "deep copy of a state dict",
)
P(
    "heapq-topk",
    "rnn",
    r"""
import heapq


def _topk_list(values, k):
    return heapq.nlargest(k, range(len(values)), key=values.__getitem__)
""",
    "heapq top-k for inspecting predictions",
)
P(
    "bisect-import",
    "positional",
    r"""
import bisect

_BREAKS = [16, 64, 256]


def _bucket(n):
    return bisect.bisect_left(_BREAKS, n)
""",
    "bisect helper",
)
P(
    "statistics-mean",
    "transformer",
    r"""
import statistics


def _mean(xs):
    return statistics.fmean(xs) if xs else 0.0
""",
    "statistics.fmean in a helper",
)

# ---------------------------------------------------------------- numerics helpers / constants
P(
    "stable-logsumexp-helper",
    "rnn",
    r"""
def logsumexp(z, dim=-1):
    m = z.amax(dim=dim, keepdim=True)
    return (z - m).exp().sum(dim=dim, keepdim=True).log() + m
""",
    "stable log-sum-exp helper (notes L5 §3.2)",
)
P(
    "math-logsumexp-scalar",
    "rnn",
    r"""
import math


def _lse(values):
    m = max(values)
    return m + math.log(sum(math.exp(v - m) for v in values))
""",
    "scalar log-sum-exp with the math module, for a hand check",
)
P(
    "np-float32-eps",
    "optimizers",
    r"""
import numpy as np

_EPS32 = float(np.finfo(np.float32).eps)
_TINY = np.float32(1e-12)
""",
    "numpy float32 eps constants",
)
P(
    "torch-finfo-helper",
    "attention",
    r"""
def _neg_large(dtype):
    return torch.finfo(dtype).min
""",
    "largest negative value per dtype for masking",
)
P(
    "sys-float-info",
    "optimizers",
    r"""
import sys

_MACHINE_EPS = sys.float_info.epsilon
""",
    "machine epsilon from sys.float_info",
)
P(
    "math-constants",
    "positional",
    r"""
TWO_PI = 2 * math.pi
_LOG_BASE = math.log(10000.0)
_INF = math.inf
""",
    "math constants",
)
P(
    "neg-inf-constant",
    "attention",
    r"""
_NEG_INF = float("-inf")
""",
    "-inf for masking",
)
P(
    "sigmoid-helper",
    "lstm_gru",
    r"""
def _sigmoid(z):
    return 1.0 / (1.0 + torch.exp(-z))
""",
    "hand-written sigmoid",
)
P(
    "softplus-helper",
    "selective_scan",
    r"""
def _softplus(x, beta=1.0, threshold=20.0):
    return torch.where(x * beta > threshold, x, torch.log1p(torch.exp(x * beta)) / beta)
""",
    "hand-written softplus matching F.softplus",
)
P(
    "silu-helper",
    "selective_scan",
    r"""
def _silu(x):
    return x * torch.sigmoid(x)
""",
    "hand-written silu",
)
P(
    "matmul-helper-no-einsum",
    "attention",
    r'''
def _bmm_t(a, b):
    """a @ b^T over the last two axes, without einsum."""
    return torch.matmul(a, b.transpose(-2, -1))
''',
    "einsum-free batched matmul helper",
)
P(
    "linear-helper",
    "rnn",
    r"""
def _linear(x, W, b=None):
    y = x @ W.T
    return y if b is None else y + b
""",
    "x @ W.T + b helper",
)
P(
    "onehot-helper",
    "rnn",
    r"""
def _one_hot(targets, num_classes, dtype):
    out = torch.zeros(*targets.shape, num_classes, dtype=dtype, device=targets.device)
    return out.scatter(-1, targets.unsqueeze(-1), 1.0)
""",
    "hand-made one-hot with scatter (not in place)",
)
P(
    "safe-div-helper",
    "optimizers",
    r"""
def _safe_div(a, b, eps=1e-12):
    return a / (b + eps)
""",
    "division helper with eps",
)
P(
    "dtype-promotion-helper",
    "selective_scan",
    r"""
def _common_dtype(*tensors):
    dt = tensors[0].dtype
    for t in tensors[1:]:
        if t is not None:
            dt = torch.promote_types(dt, t.dtype)
    return dt
""",
    "promote dtypes across optional tensors",
)
P(
    "masked-softmax-helper-name",
    "attention",
    r"""
def masked_softmax(scores, mask):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    w = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return w.masked_fill(~mask, 0.0)
""",
    "the student's own helper happens to be called masked_softmax (its name matches the *masked_softmax* pattern, but it is not PyTorch's kernel)",
)
P(
    "lstm-named-helper",
    "lstm_gru",
    r"""
def _lstm_gates(x, h, W_ih, W_hh, b_ih, b_hh):
    return (x @ W_ih.T + b_ih + h @ W_hh.T + b_hh).chunk(4, dim=-1)


def _gru_split(t):
    return t.chunk(3, dim=-1)
""",
    "own helpers whose names contain lstm/gru (the forbidden patterns *lstm*/*gru* target PyTorch's kernels)",
)
P(
    "rnn-tanh-named-helper",
    "rnn",
    r"""
def _rnn_tanh_step(x, h, W_xh, W_hh, b_h):
    return torch.tanh(x @ W_xh.T + h @ W_hh.T + b_h)
""",
    "own helper named like *rnn_tanh* (not PyTorch's fused kernel)",
)
P(
    "layer-norm-named-helper",
    "transformer",
    r"""
def _my_layer_norm_stats(x):
    mu = x.mean(-1, keepdim=True)
    return mu, ((x - mu) ** 2).mean(-1, keepdim=True)
""",
    "own helper with layer_norm in its name",
)
P(
    "cross-entropy-named-helper",
    "rnn",
    r"""
def _cross_entropy_loss_rows(logits, targets):
    m = logits.amax(-1, keepdim=True)
    lse = (logits - m).exp().sum(-1).log() + m.squeeze(-1)
    return lse - logits.gather(-1, targets[:, None]).squeeze(-1)
""",
    "own helper whose name matches *cross_entropy_loss* (written by hand)",
)
P(
    "embedding-named-helper",
    "positional",
    r"""
def _embedding_lookup(table, ids):
    return table[ids]
""",
    "own lookup helper with 'embedding' in its name",
)

# ---------------------------------------------------------------- module state / dunders
P(
    "module-cache-dict",
    "positional",
    r"""
_CACHE = {}


def _cached_positions(n, device=None):
    key = (n, str(device))
    if key not in _CACHE:
        _CACHE[key] = torch.arange(n, dtype=torch.float64, device=device)
    return _CACHE[key].clone()
""",
    "module-level cache of position indices",
)
P(
    "global-counter",
    "optimizers",
    r"""
_N_CALLS = 0


def _count_call():
    global _N_CALLS
    _N_CALLS += 1
    return _N_CALLS
""",
    "global call counter",
)
P(
    "dunder-all",
    "attention",
    r"""
__all__ = ["additive_attention", "scaled_dot_product_attention", "causal_mask", "multi_head_attention"]
""",
    "explicit public API",
)
P(
    "dunder-version-author",
    "rnn",
    r"""
__version__ = "0.1.0"
__author__ = "Zhang Wei"
""",
    "module metadata",
)
P(
    "dunder-doc-summary",
    "transformer",
    r"""
_SUMMARY = (__doc__ or "").strip().splitlines()[0] if __doc__ else ""
""",
    "first line of the module docstring",
)
P(
    "dunder-name-check",
    "positional",
    r"""
_IS_SCRIPT = __name__ == "__main__"
""",
    "whether the module runs as a script",
)
P(
    "fn-doc-helper",
    "optimizers",
    r"""
def _describe(fn):
    doc = fn.__doc__ or ""
    return f"{fn.__name__}: {doc.strip().splitlines()[0] if doc.strip() else ''}"
""",
    "reads a function's __doc__ and __name__ to print a summary",
)
P(
    "type-name-helper",
    "rnn",
    r"""
def _kind(x):
    return type(x).__name__
""",
    "type(x).__name__ in messages",
)
P(
    "class-name-helper",
    "attention",
    r"""
def _cls(x):
    return x.__class__.__name__
""",
    "x.__class__.__name__ in messages",
)
P(
    "isinstance-guard-helper",
    "transformer",
    r"""
def _check_tensor(name, t):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a tensor, got {type(t).__name__}")
""",
    "isinstance check with a clear error",
)
P(
    "getattr-literal-default",
    "selective_scan",
    r"""
_HAS_MT = hasattr(torch.Tensor, "mT")
_FLOAT64 = getattr(torch, "float64", None)
""",
    "getattr/hasattr with literal names for version compatibility",
)
P(
    "getattr-dynamic-activation",
    "transformer",
    r"""
_ACTIVATION = "relu"


def _act(name=_ACTIVATION):
    return getattr(torch, name)
""",
    "borderline: getattr(torch, name) with a non-literal name to pick the activation",
)
P(
    "torch-version-check",
    "lstm_gru",
    r"""
_TORCH_MAJOR = int(torch.__version__.split(".")[0])
""",
    "reads torch.__version__",
)
P(
    "enum-gates",
    "lstm_gru",
    r"""
import enum


class Gate(enum.IntEnum):
    I = 0
    F = 1
    G = 2
    O = 3
""",
    "IntEnum for the LSTM gate order",
)
P(
    "enum-mode",
    "transformer",
    r"""
from enum import Enum, auto


class Norm(Enum):
    POST = auto()
    PRE = auto()
""",
    "Enum for pre-/post-LN",
)
P(
    "module-level-assert",
    "attention",
    r"""
assert hasattr(torch, "softmax"), "this file needs torch.softmax"
""",
    "module-level sanity assert",
)
P(
    "module-tensor-constant",
    "selective_scan",
    r"""
_ZERO = torch.zeros(())
""",
    "a 0-dim tensor constant built at import",
)

# ---------------------------------------------------------------- control flow in helpers
P(
    "match-string-helper",
    "optimizers",
    r"""
def _rule_name(name):
    match name.lower():
        case "sgd" | "momentum":
            return "sgd"
        case "adam":
            return "adam"
        case _:
            return "other"
""",
    "match on strings",
)
P(
    "match-tuple-shape",
    "attention",
    r"""
def _mask_kind(mask):
    match tuple(mask.shape):
        case (L, S):
            return "2d"
        case (B, 1, S):
            return "padding"
        case _:
            return "full"
""",
    "match on a shape tuple",
)
P(
    "match-int-helper",
    "positional",
    r"""
def _parity(d):
    match d % 2:
        case 0:
            return "even"
        case 1:
            return "odd"
""",
    "match on ints",
)
P(
    "match-class-pattern",
    "transformer",
    r"""
def _describe_mask(m):
    match m:
        case None:
            return "none"
        case torch.Tensor() if m.dtype == torch.bool:
            return "bool"
        case _:
            return "other"
""",
    "match with a class pattern and guard",
)
P(
    "walrus-helper",
    "rnn",
    r"""
def _nonempty(xs):
    if (n := len(xs)) == 0:
        return None
    return n
""",
    "walrus operator",
)
P(
    "fstring-format-spec",
    "optimizers",
    r"""
def _fmt(x, width=10):
    return f"{float(x):>{width}.4e}"
""",
    "nested f-string format spec",
)
P(
    "str-format-percent",
    "transformer",
    r"""
def _msg(name, v):
    return "{}: {:.3f}".format(name, v) + " (%s)" % type(v).__name__
""",
    "str.format and % formatting",
)
P(
    "str-join-shapes",
    "attention",
    r"""
def _shapes(*ts):
    return " x ".join(str(tuple(t.shape)) for t in ts)
""",
    "str.join over a generator",
)
P(
    "sorted-key-lambda",
    "rnn",
    r"""
def _largest_grads(grads, k=3):
    return sorted(grads.items(), key=lambda kv: -float(kv[1].abs().max()))[:k]
""",
    "sorted with a key lambda",
)
P(
    "generator-yield",
    "rnn",
    r"""
def _chunks(T, chunk):
    start = 0
    while start < T:
        yield start, min(start + chunk, T)
        start += chunk
""",
    "generator for chunk boundaries",
)
P(
    "generator-yield-from",
    "selective_scan",
    r"""
def _halvings(T):
    if T > 1:
        yield T
        yield from _halvings(T // 2)
""",
    "recursive generator with yield from",
)
P(
    "nonlocal-closure",
    "optimizers",
    r"""
def _make_counter():
    n = 0

    def inc():
        nonlocal n
        n += 1
        return n
    return inc
""",
    "closure with nonlocal",
)
P(
    "nested-function-helper",
    "transformer",
    r"""
def _residual(fn, norm):
    def apply(x):
        return norm(x + fn(x))
    return apply
""",
    "higher-order helper with a nested function",
)
P(
    "recursion-helper",
    "selective_scan",
    r"""
def _num_levels(T):
    return 0 if T <= 1 else 1 + _num_levels((T + 1) // 2)
""",
    "recursive helper",
)
P(
    "recursion-limit",
    "selective_scan",
    r"""
import sys

if sys.getrecursionlimit() < 2000:
    sys.setrecursionlimit(2000)
""",
    "borderline: raises the recursion limit for a recursive scan",
)
P(
    "args-kwargs-forwarding",
    "attention",
    r"""
def _call_quietly(fn, *args, **kwargs):
    return fn(*args, **kwargs)
""",
    "*args/**kwargs forwarding",
)
P(
    "star-unpacking-helper",
    "rnn",
    r"""
def _split_last(shape):
    *lead, last = shape
    return tuple(lead), last
""",
    "star-unpacking",
)
P(
    "lambda-constants",
    "lstm_gru",
    r"""
_sq = lambda t: t * t
_one_minus = lambda t: 1 - t
""",
    "small lambdas",
)
P(
    "zip-enumerate-helper",
    "optimizers",
    r"""
def _pairs(names, values):
    return {f"{i}:{n}": v for i, (n, v) in enumerate(zip(names, values))}
""",
    "zip/enumerate in a dict comprehension",
)
P(
    "set-frozenset-keys",
    "rnn",
    r"""
_REQUIRED = frozenset({"W_xh", "W_hh", "b_h", "W_hy", "b_y"})


def _missing(params):
    return _REQUIRED - set(params)
""",
    "frozenset of required keys",
)
P(
    "try-import-numpy",
    "selective_scan",
    r"""
try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None
""",
    "optional numpy import",
)
P(
    "try-except-else-finally",
    "positional",
    r"""
def _to_int(n):
    try:
        value = int(n)
    except (TypeError, ValueError):
        raise TypeError(f"expected an int, got {n!r}") from None
    else:
        return value
    finally:
        pass
""",
    "try/except/else/finally in a helper",
)
P(
    "custom-exception",
    "attention",
    r'''
class ShapeError(ValueError):
    """Raised when a tensor has the wrong shape."""
''',
    "project-specific exception class",
)
P(
    "chinese-docstring-helper",
    "lstm_gru",
    r'''
def _门控说明():
    """门控：i 输入门，f 遗忘门，g 候选，o 输出门（顺序与 PyTorch 一致）。"""
    return "i f g o"
''',
    "non-ASCII function name and Chinese docstring (the notes are in Chinese)",
)
P(
    "chinese-comments",
    "rnn",
    r"""
# 说明：隐藏状态 h 的形状是 (B, H)；权重按 PyTorch 的布局 (out, in)，用 x @ W.T。
# BPTT：从 t = T 往回算 dL/da_t，再累加各参数的梯度。
_注释 = "时间反向传播"
""",
    "Chinese comments and a non-ASCII identifier",
)
P(
    "unicode-greek-identifiers",
    "optimizers",
    r"""
ε = 1e-8
β1, β2 = 0.9, 0.999
""",
    "Greek letters as identifiers, like the formulas",
)
P(
    "chinese-fstring",
    "selective_scan",
    r"""
def _说明(T):
    return f"序列长度 T={T}，扫描层数约 {max(T - 1, 0).bit_length()}"
""",
    "Chinese f-string message",
)
P(
    "torch-no-grad-decorator",
    "rnn",
    r"""
@torch.no_grad()
def _grad_free_norm(t):
    return t.norm()
""",
    "helper decorated with @torch.no_grad() (turns autograd off; uses no autograd)",
)
P(
    "torch-inference-mode-helper",
    "attention",
    r"""
def _peek(t):
    with torch.inference_mode():
        return float(t.float().abs().max())
""",
    "inference_mode while peeking at values",
)
P(
    "set-printoptions-module",
    "attention",
    r"""
torch.set_printoptions(precision=4, sci_mode=False)
""",
    "borderline: changes torch's global print options at import time",
)
P(
    "manual-seed-module",
    "rnn",
    r"""
torch.manual_seed(0)
""",
    "borderline: seeds torch's global RNG at import time (left from a notebook)",
)
P(
    "cudnn-deterministic",
    "lstm_gru",
    r"""
torch.backends.cudnn.deterministic = True
""",
    "borderline: sets a global cuDNN flag at import time",
)
P(
    "import-nn-unused",
    "rnn",
    r"""
import torch.nn as nn
""",
    "borderline: imports torch.nn out of habit without using any nn module",
)
P(
    "import-F-attention",
    "attention",
    r"""
import torch.nn.functional as F
""",
    "F imported to use F.softmax / F.pad",
)
P(
    "device-helper",
    "positional",
    r"""
def _default_device(device):
    return torch.device(device) if device is not None else torch.device("cpu")
""",
    "normalise the device argument",
)
P(
    "new-tensor-helper",
    "selective_scan",
    r"""
def _zeros_state(u, N):
    return u.new_zeros(u.shape[0], u.shape[2], N)
""",
    "tensor.new_zeros on the input's device/dtype",
)

# ---------------------------------------------------------------- imports between own modules
P(
    "relative-import-sdpa",
    "transformer",
    r"""
from .attention import scaled_dot_product_attention
""",
    "reuses the own attention module",
    needs_package=True,
)
P(
    "absolute-import-causal",
    "transformer",
    r"""
from exercises.attention import causal_mask as _causal_mask
""",
    "absolute import of an own module",
    needs_package=True,
)
P(
    "try-relative-except-absolute",
    "lstm_gru",
    r"""
try:
    from .rnn import rnn_cell
except ImportError:
    from rnn import rnn_cell
""",
    "import fallback so the file also runs as a script",
    needs_package=True,
)
P(
    "from-dot-import-module",
    "lstm_gru",
    r"""
from . import rnn as _rnn
""",
    "imports the sibling module object",
    needs_package=True,
)
P(
    "relative-import-in-function",
    "selective_scan",
    r"""
def _pe(T, d):
    from .positional import sinusoidal_encoding
    return sinusoidal_encoding(T, d)
""",
    "lazy relative import inside a helper",
    needs_package=True,
)
P(
    "relative-import-softmax-ce",
    "attention",
    r"""
from .rnn import softmax_cross_entropy as _ce
""",
    "imports another module's function for a self-test",
    needs_package=True,
)
P(
    "import-package",
    "positional",
    r"""
import exercises
""",
    "imports its own package",
    needs_package=True,
)
P(
    "sys-path-insert-fallback",
    "transformer",
    r"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
""",
    "borderline: puts its own folder on sys.path so `from attention import ...` works as a script",
    needs_package=True,
)
P(
    "here-path-module-level",
    "rnn",
    r"""
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
""",
    "borderline: computes its own folder from __file__ at import (never opens anything)",
    needs_package=True,
)

# ---------------------------------------------------------------- __main__ self-tests
P(
    "main-selftest-seed",
    "rnn",
    r"""
if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(2, 3, 4)
    h0 = torch.zeros(2, 5)
    print("self-test shapes:", tuple(x.shape), tuple(h0.shape))
""",
    "self-test block that does not run on import",
)
P(
    "main-os-path-file",
    "attention",
    r"""
if __name__ == "__main__":
    import os

    print("running", os.path.join(os.path.dirname(__file__), "attention.py"))
""",
    "os.path with __file__ only inside __main__",
)
P(
    "main-random-seed",
    "optimizers",
    r"""
if __name__ == "__main__":
    import random

    random.seed(0)
    torch.manual_seed(0)
    print([round(random.random(), 3) for _ in range(3)])
""",
    "random.seed / torch.manual_seed in a self-test",
)
P(
    "main-np-printoptions",
    "positional",
    r"""
if __name__ == "__main__":
    import numpy as np

    np.set_printoptions(precision=3, suppress=True)
    torch.set_printoptions(precision=3)
""",
    "print options only when run as a script",
)
P(
    "main-assert-close",
    "transformer",
    r"""
if __name__ == "__main__":
    a = torch.ones(3)
    torch.testing.assert_close(a, a.clone())
    assert math.isclose(1.0, 1.0 + 1e-12) if "math" in dir() else True
""",
    "borderline: torch.testing and dir() in a self-test",
)
P(
    "main-compare-builtin",
    "lstm_gru",
    r"""
if __name__ == "__main__":
    cell = torch.nn.LSTMCell(3, 4)
    print("reference cell:", cell)
""",
    "borderline: names nn.LSTMCell (forbidden inside the lstm functions) in a __main__ self-test that never runs on import",
)
P(
    "main-sys-argv",
    "selective_scan",
    r"""
if __name__ == "__main__":
    import sys

    T = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    print("T =", T)
""",
    "reads argv only when run as a script",
)
P(
    "main-unittest",
    "positional",
    r"""
import unittest


class _SelfTest(unittest.TestCase):
    def test_shape(self):
        self.assertEqual(tuple(torch.zeros(2, 3).shape), (2, 3))


if __name__ == "__main__":
    unittest.main()
""",
    "a unittest class kept in the module",
)
P(
    "main-doctest",
    "optimizers",
    r'''
def _halve(x):
    """
    >>> _halve(4)
    2.0
    """
    return x / 2


if __name__ == "__main__":
    import doctest

    doctest.testmod()
''',
    "borderline: doctest.testmod (which introspects the module) in a __main__ block that never runs on import",
)
P(
    "main-timeit",
    "attention",
    r"""
if __name__ == "__main__":
    import timeit

    print(timeit.timeit(lambda: torch.ones(8, 8) @ torch.ones(8, 8), number=10))
""",
    "timeit in a self-test",
)
P(
    "main-argparse",
    "rnn",
    r"""
if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args([])
    print(args.steps)
""",
    "argparse for a demo script",
)

# ---------------------------------------------------------------- body snippets: optimizers
B(
    "opt-assert-shape",
    "optimizers.sgd",
    r"""
assert w.shape == dw.shape, f"w {tuple(w.shape)} vs dw {tuple(dw.shape)}"
""",
    "shape assert with a message",
)
B(
    "opt-isinstance-state",
    "optimizers.sgd",
    r"""
assert isinstance(state, dict), f"state must be a dict, got {type(state).__name__}"
""",
    "type check with type(x).__name__",
)
B(
    "opt-perf-counter",
    "optimizers.sgd_momentum",
    r"""
import time
_t0 = time.perf_counter()
""",
    "timing start left in the body",
)
B(
    "opt-debug-print-stderr",
    "optimizers.sgd_momentum",
    r"""
import sys
print(f"sgd_momentum: lr={lr:.3g} mu={momentum} keys={sorted(state)}", file=sys.stderr)
""",
    "one-line debug print to stderr",
)
B(
    "opt-state-get-check",
    "optimizers.sgd_momentum",
    r"""
_v = state.get("velocity")
if _v is not None:
    assert _v.shape == w.shape
""",
    "check the buffer's shape",
)
B(
    "opt-dict-copy",
    "optimizers.adagrad",
    r"""
_old = dict(state)
_merged = {**state, "seen": True}
""",
    "copies of the state dict (never written back)",
)
B(
    "opt-eps-check",
    "optimizers.adagrad",
    r"""
if eps <= 0:
    raise ValueError("eps must be positive")
""",
    "argument validation that never fires",
)
B(
    "opt-float-format",
    "optimizers.rmsprop",
    r"""
_desc = "rmsprop lr={:.3f} alpha={:.2f}".format(lr, alpha) + " eps=%g" % eps
""",
    "str.format and % formatting",
)
B(
    "opt-math-isfinite",
    "optimizers.rmsprop",
    r"""
import math
assert math.isfinite(lr) and 0.0 <= alpha <= 1.0
""",
    "sanity checks with math.isfinite",
)
B(
    "opt-betas-unpack",
    "optimizers.adam",
    r"""
beta1, beta2 = betas
assert 0.0 <= beta1 < 1.0 and 0.0 <= beta2 < 1.0, "betas must be in [0, 1)"
""",
    "unpack and validate betas",
)
B(
    "opt-step-int-check",
    "optimizers.adam",
    r"""
_step = state.get("step", 0)
assert isinstance(_step, int), f"step should be an int, got {type(_step).__name__}"
""",
    "state['step'] is a Python int",
)
B(
    "opt-match-state-len",
    "optimizers.adam",
    r"""
match len(state):
    case 0:
        _first = True
    case _:
        _first = False
""",
    "match on the number of state entries",
)
B(
    "opt-walrus-grads",
    "optimizers.clip_grad_norm",
    r"""
if (_n := len(grads)) == 0:
    pass
""",
    "walrus on the list length",
)
B(
    "opt-all-tensors",
    "optimizers.clip_grad_norm",
    r"""
assert all(isinstance(g, torch.Tensor) for g in grads), "grads must be tensors"
_shapes = [tuple(g.shape) for g in grads]
""",
    "generator in all() and a list comprehension",
)
B(
    "opt-devices-set",
    "optimizers.clip_grad_norm",
    r"""
_devices = {g.device for g in grads}
assert len(_devices) <= 1, f"gradients on several devices: {_devices}"
""",
    "set comprehension over devices",
)
B(
    "opt-enumerate-loop",
    "optimizers.clip_grad_norm",
    r"""
for _i, _g in enumerate(grads):
    if _g.numel() == 0:
        print(f"grad {_i} is empty")
""",
    "enumerate loop with a print that never fires",
)
B(
    "opt-max-norm-float",
    "optimizers.clip_grad_norm",
    r"""
_max = float(max_norm)
assert _max > 0, "max_norm must be positive"
""",
    "float() on a hyperparameter",
)

# ---------------------------------------------------------------- body snippets: rnn
B(
    "rnn-cell-shape-unpack",
    "rnn.rnn_cell",
    r"""
B, D = x.shape
H = h_prev.shape[-1]
assert W_xh.shape == (H, D), f"W_xh should be {(H, D)}, got {tuple(W_xh.shape)}"
assert W_hh.shape == (H, H) and b_h.shape == (H,)
""",
    "shape unpacking and asserts from the docstring",
)
B(
    "rnn-cell-dtype-name",
    "rnn.rnn_cell",
    r"""
_dtype_name = str(x.dtype).replace("torch.", "")
_same = x.dtype == h_prev.dtype
""",
    "dtype name for a debug message",
)
B(
    "rnn-cell-weight-transpose",
    "rnn.rnn_cell",
    r"""
_WT = W_xh.T
_UT = W_hh.mT
""",
    "x.T and x.mT views held locally",
)
B(
    "rnn-forward-unbind-loop",
    "rnn.rnn_forward",
    r"""
for _t, _x_t in enumerate(x.unbind(dim=1)):
    assert _x_t.shape == (x.shape[0], x.shape[2])
""",
    "enumerate over time slices",
)
B(
    "rnn-forward-slices",
    "rnn.rnn_forward",
    r"""
_first, _last = x[:, 0], x[..., -1]
_x4 = x[:, None]
del _first, _last, _x4
""",
    "slicing with ... and None, then del",
)
B(
    "rnn-forward-stderr-print",
    "rnn.rnn_forward",
    r"""
import sys
print("rnn_forward", tuple(x.shape), "->", (x.shape[0], x.shape[1], h0.shape[1]), file=sys.stderr)
""",
    "debug print of shapes",
)
B(
    "rnn-ce-target-range",
    "rnn.softmax_cross_entropy",
    r"""
assert targets.dtype == torch.long, f"targets must be int64, got {targets.dtype}"
assert int(targets.min()) >= 0 and int(targets.max()) < logits.shape[-1]
""",
    "target range check with int()",
)
B(
    "rnn-ce-item-tolist",
    "rnn.softmax_cross_entropy",
    r"""
_first_target = targets[0].item()
_ids = targets.tolist()
""",
    ".item() and .tolist() reads",
)
B(
    "rnn-ce-numpy-peek",
    "rnn.softmax_cross_entropy",
    r"""
import numpy as np
_arr = np.asarray(logits.detach().cpu())
assert _arr.ndim == 2
""",
    "converts to numpy to inspect",
)
B(
    "rnn-bptt-keys",
    "rnn.rnn_bptt",
    r"""
_required = {"W_xh", "W_hh", "b_h", "W_hy", "b_y"}
assert _required <= set(params), f"missing: {_required - set(params)}"
""",
    "set arithmetic on the params keys",
)
B(
    "rnn-bptt-no-grad",
    "rnn.rnn_bptt",
    r"""
with torch.no_grad():
    _norms = {k: float(v.norm()) for k, v in params.items()}
""",
    "torch.no_grad() around a debug computation (no autograd used)",
)
B(
    "rnn-bptt-unpack-params",
    "rnn.rnn_bptt",
    r"""
W_xh, W_hh, b_h, W_hy, b_y = (params[k] for k in ("W_xh", "W_hh", "b_h", "W_hy", "b_y"))
B, T, D = x.shape
C = W_hy.shape[0]
""",
    "unpack parameters and sizes up front",
)
B(
    "rnn-bptt-requires-grad-read",
    "rnn.rnn_bptt",
    r"""
_rg = x.requires_grad or h0.requires_grad
_gr = torch.is_grad_enabled()
""",
    "reads requires_grad / is_grad_enabled (does not change them)",
)
B(
    "rnn-bptt-pprint",
    "rnn.rnn_bptt",
    r"""
from pprint import pformat
_txt = pformat({k: tuple(v.shape) for k, v in params.items()})
""",
    "pformat of parameter shapes",
)
B(
    "rnn-tbptt-chunk-check",
    "rnn.truncated_bptt",
    r"""
if not isinstance(chunk, int) or chunk < 1:
    raise ValueError(f"chunk must be a positive int, got {chunk!r}")
_n_chunks = -(-x.shape[1] // chunk)
""",
    "validation and ceil-division",
)
B(
    "rnn-tbptt-bounds-list",
    "rnn.truncated_bptt",
    r"""
_T = x.shape[1]
_bounds = [(s, min(s + chunk, _T)) for s in range(0, _T, chunk)]
assert _bounds[-1][1] == _T
""",
    "precomputed chunk bounds",
)
B(
    "rnn-tbptt-detach-clone",
    "rnn.truncated_bptt",
    r"""
_h = h0.detach().clone()
""",
    "detach().clone() of the initial state",
)
B(
    "rnn-birnn-keys-equal",
    "rnn.birnn_forward",
    r"""
assert params_fwd.keys() == params_bwd.keys(), "both directions need the same keys"
_H = h0_fwd.shape[-1]
""",
    "dict keys comparison",
)
B(
    "rnn-birnn-sorted-join",
    "rnn.birnn_forward",
    r"""
_names = ", ".join(sorted(params_fwd))
""",
    "str.join over sorted keys",
)
B(
    "rnn-greedy-checks",
    "rnn.greedy_decode",
    r"""
assert steps >= 0, "steps must be >= 0"
assert start_token.dtype == torch.int64, start_token.dtype
_V, _D = embedding.shape
""",
    "checks from the docstring",
)
B(
    "rnn-greedy-tolist",
    "rnn.greedy_decode",
    r"""
_start = start_token.tolist()
_msg = f"decoding {steps} steps from {_start[:3]}"
""",
    "tolist for a message",
)
B(
    "rnn-greedy-try-except",
    "rnn.greedy_decode",
    r"""
import traceback
try:
    _steps = int(steps)
except Exception:
    traceback.print_exc()
""",
    "traceback.print_exc in an except that never fires",
)

# ---------------------------------------------------------------- body snippets: lstm_gru
B(
    "lstm-cell-gate-assert",
    "lstm_gru.lstm_cell",
    r"""
H = h_prev.shape[1]
assert W_ih.shape[0] == 4 * H, f"W_ih needs 4H={4 * H} rows, got {W_ih.shape[0]}"
assert c_prev.shape == h_prev.shape
""",
    "gate-stacking assert",
)
B(
    "lstm-cell-gate-names",
    "lstm_gru.lstm_cell",
    r"""
_gate_names = ("i", "f", "g", "o")
_blocks = dict(zip(_gate_names, range(4)))
""",
    "zip/dict for gate order",
)
B(
    "lstm-cell-local-helper",
    "lstm_gru.lstm_cell",
    r"""
def _block(t, k, H=h_prev.shape[1]):
    return t[:, k * H:(k + 1) * H]
""",
    "local helper def with a default argument",
)
B(
    "lstm-forward-fstring",
    "lstm_gru.lstm_forward",
    r"""
_T = x.size(1)
_info = f"{type(x).__name__} {x.dtype} T={_T:d} H={h0.shape[1]:>3}"
""",
    "f-string with format specs",
)
B(
    "lstm-forward-x-dim",
    "lstm_gru.lstm_forward",
    r"""
if x.dim() != 3:
    raise ValueError(f"x must be (B, T, D), got {tuple(x.shape)}")
""",
    "raise in a branch that never runs",
)
B(
    "gru-cell-chunk-views",
    "lstm_gru.gru_cell",
    r"""
_r_w, _z_w, _n_w = W_ih.chunk(3, dim=0)
assert _r_w.shape == _z_w.shape == _n_w.shape
del _r_w, _z_w, _n_w
""",
    "chunks of a weight (views, read only), then del",
)
B(
    "gru-cell-class-name",
    "lstm_gru.gru_cell",
    r"""
_kind = x.__class__.__name__
assert _kind == "Tensor" or isinstance(x, torch.Tensor)
""",
    "x.__class__.__name__",
)
B(
    "gru-forward-warnings",
    "lstm_gru.gru_forward",
    r"""
import warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _mean = float(x.float().mean())
""",
    "warnings.catch_warnings around a computation",
)
B(
    "gru-forward-nonlocal",
    "lstm_gru.gru_forward",
    r"""
def _counter():
    n = 0

    def inc():
        nonlocal n
        n += 1
        return n
    return inc

_tick = _counter()
_tick()
""",
    "closure with nonlocal inside the body",
)

# ---------------------------------------------------------------- body snippets: attention
B(
    "add-attn-shapes",
    "attention.additive_attention",
    r"""
B, S, Hk = keys.shape
_A = W_q.shape[0]
assert v.shape == (_A,) and W_k.shape == (_A, Hk)
""",
    "shape checks",
)
B(
    "add-attn-mask-check",
    "attention.additive_attention",
    r"""
if mask is not None:
    assert mask.dtype == torch.bool, f"mask must be bool, got {mask.dtype}"
    assert mask.shape == keys.shape[:2]
""",
    "mask checks",
)
B(
    "sdpa-star-shape",
    "attention.scaled_dot_product_attention",
    r"""
*_batch, L, d = q.shape
_S = k.shape[-2]
_scale = 1.0 / math.sqrt(d)
""",
    "star-unpacking of a shape",
)
B(
    "sdpa-mask-isinstance",
    "attention.scaled_dot_product_attention",
    r"""
if mask is not None and not isinstance(mask, torch.Tensor):
    raise TypeError(f"mask must be a tensor, got {type(mask).__name__}")
""",
    "isinstance check",
)
B(
    "sdpa-getattr-device",
    "attention.scaled_dot_product_attention",
    r"""
_dev = getattr(q, "device", None)
_has_dtype = hasattr(q, "dtype")
""",
    "getattr with a literal name and a default",
)
B(
    "sdpa-kt-view",
    "attention.scaled_dot_product_attention",
    r"""
_kt = k.mT
assert _kt.shape[-2] == q.shape[-1]
""",
    "k.mT",
)
B(
    "causal-check-T",
    "attention.causal_mask",
    r"""
assert isinstance(T, int) and T >= 0, f"T must be a non-negative int, got {T!r}"
""",
    "argument check",
)
B(
    "causal-device-normalise",
    "attention.causal_mask",
    r"""
_device = torch.device(device) if device is not None else None
""",
    "torch.device() on the argument",
)
B(
    "mha-divisible",
    "attention.multi_head_attention",
    r"""
E = query.shape[-1]
assert E % num_heads == 0, f"num_heads={num_heads} must divide E={E}"
head_dim = E // num_heads
""",
    "head divisibility assert",
)
B(
    "mha-param-shapes",
    "attention.multi_head_attention",
    r"""
for _name in ("W_q", "W_k", "W_v", "W_o"):
    assert params[_name].shape == (query.shape[-1],) * 2, _name
""",
    "loop over parameter names",
)
B(
    "mha-sorted-params",
    "attention.multi_head_attention",
    r"""
_names = sorted(params, key=lambda n: (n[0], n))
""",
    "sorted with a key lambda",
)
B(
    "mha-mask-ndim-match",
    "attention.multi_head_attention",
    r"""
match None if mask is None else mask.dim():
    case None:
        _mask_kind = "none"
    case 2:
        _mask_kind = "(L, S)"
    case 3:
        _mask_kind = "(B, L|1, S)"
    case _:
        _mask_kind = "other"
""",
    "match on the mask's rank",
)

# ---------------------------------------------------------------- body snippets: positional
B(
    "pe-dtype-check",
    "positional.sinusoidal_encoding",
    r"""
assert dtype.is_floating_point, f"dtype must be floating point, got {dtype}"
assert d_model >= 1
""",
    "dtype.is_floating_point",
)
B(
    "pe-half-cols",
    "positional.sinusoidal_encoding",
    r"""
_n_sin = (d_model + 1) // 2
_n_cos = d_model // 2
assert _n_sin + _n_cos == d_model
""",
    "column counts for odd d_model",
)
B(
    "pe-lru-local",
    "positional.sinusoidal_encoding",
    r"""
import functools

@functools.lru_cache(maxsize=None)
def _freq(i):
    return 10000.0 ** (-(2 * i) / d_model)

_f0 = _freq(0)
""",
    "local lru_cache helper",
)
B(
    "embed-shapes",
    "positional.embed_tokens",
    r"""
B, T = tokens.shape
_V, _d = embedding.shape
assert pe.shape[0] >= T and pe.shape[1] == _d, f"pe {tuple(pe.shape)} too short or wrong width"
""",
    "shape checks",
)
B(
    "embed-range-check",
    "positional.embed_tokens",
    r"""
assert 0 <= int(tokens.min()) and int(tokens.max()) < embedding.shape[0], "token id out of range"
""",
    "token range check",
)

# ---------------------------------------------------------------- body snippets: transformer
B(
    "ln-shape-check",
    "transformer.layer_norm",
    r"""
E = x.shape[-1]
assert weight.shape == (E,) and bias.shape == (E,), "weight/bias must be (E,)"
""",
    "shape check",
)
B(
    "ln-eps-float",
    "transformer.layer_norm",
    r"""
_eps = float(eps)
_msg = "layer_norm eps=%.1e" % _eps
""",
    "% formatting of eps",
)
B(
    "ffn-shapes",
    "transformer.feed_forward",
    r"""
_F, _E = W1.shape
assert W2.shape == (_E, _F), f"W2 should be {(_E, _F)}"
""",
    "shape checks",
)
B(
    "enc-keys",
    "transformer.encoder_block",
    r"""
assert {"self_attn", "ffn", "norm1", "norm2"} <= set(params), sorted(params)
_mode = "pre-LN" if norm_first else "post-LN"
""",
    "keys check and conditional expression",
)
B(
    "enc-perf-log",
    "transformer.encoder_block",
    r"""
import logging
import time
_log = logging.getLogger(__name__)
_t0 = time.perf_counter()
_log.debug("encoder_block %s heads=%d", tuple(x.shape), num_heads)
""",
    "logger.debug with lazy % args",
)
B(
    "dec-shapes",
    "transformer.decoder_block",
    r"""
B, T, E = x.shape
_S = memory.shape[1]
assert memory.shape[0] == B and memory.shape[2] == E
""",
    "shape checks",
)
B(
    "dec-mask-dtypes",
    "transformer.decoder_block",
    r"""
for _m in (self_mask, memory_mask):
    if _m is not None:
        assert _m.dtype == torch.bool, f"masks must be bool, got {_m.dtype}"
""",
    "loop over optional masks",
)
B(
    "dec-contextlib-suppress",
    "transformer.decoder_block",
    r"""
import contextlib
with contextlib.suppress(KeyError):
    _ca = params["cross_attn"]
""",
    "contextlib.suppress",
)

# ---------------------------------------------------------------- body snippets: selective_scan
B(
    "disc-shapes",
    "selective_scan.discretize",
    r"""
Bsz, T, Dch = delta.shape
N = A.shape[1]
assert A.shape == (Dch, N) and B.shape == (Bsz, T, N)
""",
    "shape unpacking (not shadowing B)",
)
B(
    "disc-none-slicing",
    "selective_scan.discretize",
    r"""
_d4 = delta[..., None]
_B4 = B[:, :, None, :]
""",
    "None/... slicing",
)
B(
    "scan-shape-assert",
    "selective_scan.linear_scan",
    r"""
assert a.shape == b.shape, f"a {tuple(a.shape)} and b {tuple(b.shape)} differ"
if h0 is not None:
    assert h0.shape == a.shape[:1] + a.shape[2:]
""",
    "shape asserts",
)
B(
    "scan-levels-math",
    "selective_scan.linear_scan",
    r"""
import math
_T = a.shape[1]
_levels = int(math.floor(math.log2(_T))) if _T > 1 else 0
""",
    "log2 of T for the number of levels",
)
B(
    "scan-bit-length",
    "selective_scan.linear_scan",
    r"""
_depth = max(a.shape[1] - 1, 0).bit_length()
""",
    "int.bit_length",
)
B(
    "ss-flags-match",
    "selective_scan.selective_scan",
    r"""
match (D is not None, z is not None):
    case (True, True):
        _variant = "skip+gate"
    case (True, False):
        _variant = "skip"
    case (False, True):
        _variant = "gate"
    case _:
        _variant = "plain"
""",
    "match on a tuple of flags",
)
B(
    "ss-bias-check",
    "selective_scan.selective_scan",
    r"""
if delta_bias is not None:
    assert delta_bias.shape == (u.shape[-1],), "delta_bias must be (D,)"
assert isinstance(delta_softplus, bool) and isinstance(return_last_state, bool)
""",
    "optional-argument checks",
)
B(
    "ss-result-type",
    "selective_scan.selective_scan",
    r"""
_dt = torch.result_type(u, delta)
_dt = torch.promote_types(_dt, A.dtype)
""",
    "expected output dtype",
)
B(
    "ss-stack-cat-local",
    "selective_scan.selective_scan",
    r"""
_both = torch.stack([u, delta], dim=0)
_wide = torch.cat([B, C], dim=-1)
del _both, _wide
""",
    "torch.stack/cat of arguments into new locals",
)

# ---------------------------------------------------------------- more body snippets (needs own module functions)
B(
    "rnn-forward-callable-check",
    "rnn.rnn_forward",
    r"""
assert callable(rnn_cell)
""",
    "checks the helper it is about to call",
    needs_package=True,
)
B(
    "lstm-forward-cell-name",
    "lstm_gru.lstm_forward",
    r"""
_callee = lstm_cell.__name__
""",
    "reads the callee's __name__ (a name containing 'lstm')",
    needs_package=True,
)
B(
    "mha-sdpa-doc",
    "attention.multi_head_attention",
    r"""
_doc_first = ((scaled_dot_product_attention.__doc__ or "").strip().splitlines() or [""])[0]
""",
    "reads a sibling function's __doc__",
    needs_package=True,
)
B(
    "enc-local-import-ln",
    "transformer.encoder_block",
    r"""
from .transformer import layer_norm as _ln_check
assert callable(_ln_check)
""",
    "relative import inside a function",
    needs_package=True,
)
B(
    "dec-causal-call",
    "transformer.decoder_block",
    r"""
_cm = causal_mask(x.shape[1], device=x.device)
assert _cm.dtype == torch.bool
""",
    "calls the imported causal_mask early to check it",
    needs_package=True,
)
B(
    "ss-discretize-probe",
    "selective_scan.selective_scan",
    r"""
assert callable(discretize) and callable(linear_scan)
""",
    "checks the callees exist",
    needs_package=True,
)
