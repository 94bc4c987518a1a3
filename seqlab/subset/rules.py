"""The rules of the language subset, as data: what a submission may import and reach, and why.

Every table here is read by the transformer (static rules, in the trusted parent and in the
student's own tests), by the runtime guards (in the student's process) and by the generator of
the student README's rules section, so a rule is written once and described where it is applied.

The principle: a sequence-model exercise needs tensors, maths, a few pure standard modules and
the student's own helpers. Anything that reaches files, processes, native code, the interpreter's
frames and namespaces, or turns a string into an attribute is outside the subset; the honest
idioms around it (debug prints, timing, logging, type hints, helper classes, private attributes
of one's own objects) are inside.
"""

from __future__ import annotations

from .package import PACKAGE as PACKAGE  # the rules name it too: rules.PACKAGE
from .shims import SHIMS, exports

# Modules a submission may import, with the reason each is harmless. A module's attributes are
# still guarded (DENIED_ATTRIBUTES, ALLOWED_ONLY); a submodule is allowed when its top is, unless
# DENIED_MODULES names it or a module above it.
ALLOWED_MODULES: dict[str, str] = {
    "torch": "tensors and their maths",
    "numpy": "array maths",
    "math": "scalar maths",
    "cmath": "complex scalar maths",
    "numbers": "numeric abstract types",
    "typing": "type hints",
    "typing_extensions": "type hints",
    "functools": "partial, reduce, lru_cache, wraps",
    "itertools": "iteration helpers",
    "collections": "containers",
    "dataclasses": "small config and record classes",
    "operator": "operators as functions (not attrgetter or methodcaller)",
    "enum": "enumerations",
    "abc": "abstract base classes",
    "statistics": "descriptive statistics",
    "random": "pseudo-random numbers",
    "warnings": "warnings",
    "__future__": "future statements",
    "sys": "sys.stdout, sys.stderr, sys.float_info and a few constants",
    "time": "clocks (perf_counter, time, monotonic, process_time) and sleep",
    "logging": "console logging",
    "pprint": "pretty printing",
    "traceback": "printing the exception being handled",
    "contextlib": "context-manager helpers",
    "copy": "copy and deepcopy",
    "heapq": "heaps",
    "bisect": "binary search",
    "decimal": "decimal arithmetic",
    "os": "os.path's pure path helpers and the environment (the child's holds no secret)",
    "posixpath": "os.path's pure path helpers only",
}

# Submodules refused although their top is allowed: each reaches files, native code, compilers,
# other processes or the interpreter's internals.
DENIED_MODULES: dict[str, str] = {
    "torch.utils.cpp_extension": "compiles and loads native code",
    "torch.utils.data": "starts worker processes",
    "torch.utils.benchmark": "compiles and runs code from strings",
    "torch.hub": "downloads and runs code",
    "torch.jit": "a compiler that reads source files",
    "torch.compiler": "a compiler",
    "torch.library": "registers native operators",
    "torch.package": "loads code from archives",
    "torch.fx": "turns code into graphs and back into code",
    "torch.overrides": "intercepts every torch function",
    "torch.ops": "the raw operator registry",
    "torch.onnx": "writes model files",
    "torch.distributed": "networking",
    "torch.multiprocessing": "processes",
    "torch.serialization": "reads and writes files",
    "torch.storage": "storages backed by files",
    "torch.export": "a compiler",
    "torch.profiler": "writes traces",
    "torch.cuda.memory": "writes memory snapshots",
    "numpy.ctypeslib": "native code",
    "numpy.f2py": "compiles and loads native code",
    "numpy.distutils": "builds native code",
    "numpy.lib.format": "reads and writes .npy files",
    "numpy.lib.npyio": "reads and writes files",
    "numpy.lib.utils": "source and introspection helpers",
    "numpy.testing.overrides": "intercepts numpy functions",
    "unittest.mock": "patches any attribute named by a string",
}

# Attributes refused on an allowed module or class, keyed by the owner's name. A name listed
# under a module is refused however it is reached (``torch.load``, ``from torch import load``).
DENIED_ATTRIBUTES: dict[str, dict[str, str]] = {
    "torch": {
        name: "reads or writes files, or compiles code"
        for name in (
            "load",
            "save",
            "from_file",
            "compile",
            "ops",
            "library",
            "jit",
            "overrides",
            "hub",
            "package",
            "fx",
            "utils",
            "serialization",
            "storage",
            "UntypedStorage",
            "TypedStorage",
            "ByteStorage",
            "classes",
            "compiler",
            "export",
            "onnx",
            "distributed",
            "multiprocessing",
            "profiler",
        )
    }
    | {"os": "torch.os is the os module", "sys": "torch.sys is the sys module"},
    "torch.Tensor": {
        "storage": "storages reach memory and files",
        "untyped_storage": "storages reach memory and files",
        "share_memory_": "shared memory outlives the call",
        "register_post_accumulate_grad_hook": "hooks run code inside autograd",
    },
    "numpy": {
        name: "reads or writes files"
        for name in (
            "load",
            "save",
            "savez",
            "savez_compressed",
            "loadtxt",
            "savetxt",
            "genfromtxt",
            "fromfile",
            "memmap",
            "fromregex",
            "DataSource",
            "ctypeslib",
            "f2py",
            "distutils",
            "lib",
            "show_config",
            "get_include",
        )
    }
    | {  # what the audit of the allowed surface (surface.py) finds reaching the interpreter
        "bmat": "looks names up in the caller's frame from a string",
        "info": "imports modules by string and reads their sources",
        "show_runtime": "reads the interpreter and the machine",
        # testing.measure compiles and runs a string as plain Python (the blind integrity bank's
        # widest hole); the rest of numpy.testing is test tooling no exercise needs
        "testing": "runs strings of code (testing.measure) outside the subset",
    },
    "numpy.ndarray": {"tofile": "writes a file", "dump": "writes a file", "ctypes": "native pointers"},
    "operator": {
        "attrgetter": "turns a string into an attribute access",
        "methodcaller": "turns a string into a method call",
    },
    "string": {"Formatter": "its fields turn strings into attribute accesses"},
    "typing": {
        "get_type_hints": "evaluates strings as code",
        "ForwardRef": "evaluates strings as code",
        "evaluate_forward_ref": "evaluates strings as code",
    },
    "typing_extensions": {"get_type_hints": "evaluates strings as code", "ForwardRef": "evaluates strings as code"},
    "dataclasses": {"make_dataclass": "builds classes from strings (write a @dataclass class)"},
    "logging": {
        "FileHandler": "writes files",
        "handlers": "files, sockets and processes",
        "config": "reads files and opens sockets",
        "setLoggerClass": "changes every logger",
        "setLogRecordFactory": "changes every record",
        "makeLogRecord": "builds records from dicts",
        "currentframe": "returns a frame",
        "root": "the process's root logger (use logging.getLogger(__name__))",
    },
    "json": {"load": "reads a file", "dump": "writes a file"},
    "logging.Logger": {
        "findCaller": "returns the call stack (the grader's frames)",
        "manager": "every logger of the process",
    },
    "random": {"SystemRandom": "reads the operating system's entropy"},
    "functools": {"singledispatchmethod": "dispatch on annotations evaluated from strings"},
}

# Modules of which only these attributes exist for a submission: the rest of the module reaches
# the interpreter (sys.modules, sys._getframe), the file system or processes.
ALLOWED_ONLY: dict[str, frozenset[str]] = {
    "sys": frozenset(
        {
            "stdout",
            "stderr",
            "float_info",
            "int_info",
            "hash_info",
            "maxsize",
            "version",
            "version_info",
            "platform",
            "byteorder",
            "float_repr_style",
            "getrecursionlimit",
            "setrecursionlimit",
            "exc_info",
            "exit",
            "argv",
        }
    ),
    "time": frozenset(
        {
            "perf_counter",
            "perf_counter_ns",
            "time",
            "time_ns",
            "monotonic",
            "monotonic_ns",
            "process_time",
            "process_time_ns",
            "sleep",
            "strftime",
            "localtime",
            "gmtime",
            "asctime",
            "ctime",
        }
    ),
    # The child's environment holds no secret (it is built afresh for every student process).
    "os": frozenset({"path", "sep", "linesep", "curdir", "pardir", "extsep", "environ", "getenv"}),
    "posixpath": frozenset(
        {"join", "basename", "dirname", "split", "splitext", "normpath", "abspath", "sep", "extsep", "curdir", "pardir"}
    ),
}
# The modules served by the subset's vetted shims (shims.py: the standard library's own code runs
# strings or reaches frames, surface.py lists such code): a submission reaches what the shim holds
# and nothing else, so each shim's names are that module's ALLOWED_ONLY (static check, README).
ALLOWED_ONLY |= {name: exports(name) for name in SHIMS}
# Of these, only what the audit of the allowed surface finds clean: statistics.namedtuple is the
# eval-made one, statistics.linear_regression returns one; abc.update_abstractmethods reads
# attributes by computed names.
ALLOWED_ONLY |= {
    "statistics": frozenset({
        "mean", "fmean", "median", "median_low", "median_high", "mode", "multimode", "stdev", "pstdev",
        "variance", "pvariance", "geometric_mean", "harmonic_mean", "quantiles", "StatisticsError",
    }),
    "abc": frozenset({"ABC", "ABCMeta", "abstractmethod"}),
}  # fmt: skip

# Builtins a submission has. Missing on purpose: eval, exec, compile, __import__ (imports go
# through the guarded import statement), globals, locals, vars on anything but one's own
# objects, open, input, breakpoint, help, memoryview, exit and quit.
ALLOWED_BUILTINS = frozenset(
    {
        "abs", "all", "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr",
        "classmethod", "complex", "dict", "dir", "divmod", "enumerate", "filter", "float",
        "format", "frozenset", "hash", "hex", "id", "int", "isinstance", "issubclass", "iter",
        "len", "list", "map", "max", "min", "next", "object", "oct", "ord", "pow", "print",
        "property", "range", "repr", "reversed", "round", "set", "slice", "sorted",
        "staticmethod", "str", "sum", "super", "tuple", "zip", "NotImplemented", "Ellipsis",
        "aiter", "anext",
    }
)  # fmt: skip
# getattr, setattr, delattr, hasattr and vars and type exist, guarded (safe_builtins.py).
GUARDED_BUILTINS = frozenset({"getattr", "setattr", "delattr", "hasattr", "vars", "type"})
REFUSED_BUILTINS: dict[str, str] = {
    "eval": "runs a string as code",
    "exec": "runs a string as code",
    "compile": "turns a string into code",
    "__import__": "imports by string (write an import statement)",
    "globals": "the module's namespace, guards included",
    "locals": "a frame's namespace",
    "open": "files (the tests give every input as an argument)",
    "input": "the grader has no keyboard",
    "breakpoint": "a debugger",
    "help": "an interactive helper",
    "memoryview": "raw memory",
    "exit": "exits the interpreter",
    "quit": "exits the interpreter",
    "__build_class__": "the class statement's own machinery",
}

# Dunder attributes anyone may read: names, documentation, the class of a value, and the
# special methods (``super().__init__(...)``, ``x.__len__()``).
HARMLESS_DUNDERS = frozenset(
    {"__name__", "__qualname__", "__doc__", "__module__", "__class__", "__annotations__", "__version__"}
)
SPECIAL_METHODS = frozenset(
    {
        "__init__", "__new__", "__post_init__", "__call__", "__repr__", "__str__", "__format__",
        "__bytes__", "__hash__", "__bool__", "__len__", "__length_hint__", "__getitem__",
        "__setitem__", "__delitem__", "__missing__", "__iter__", "__next__", "__reversed__",
        "__contains__", "__enter__", "__exit__", "__eq__", "__ne__", "__lt__", "__le__",
        "__gt__", "__ge__", "__add__", "__sub__", "__mul__", "__matmul__", "__truediv__",
        "__floordiv__", "__mod__", "__divmod__", "__pow__", "__lshift__", "__rshift__",
        "__and__", "__xor__", "__or__", "__radd__", "__rsub__", "__rmul__", "__rmatmul__",
        "__rtruediv__", "__rfloordiv__", "__rmod__", "__rdivmod__", "__rpow__", "__rlshift__",
        "__rrshift__", "__rand__", "__rxor__", "__ror__", "__iadd__", "__isub__", "__imul__",
        "__imatmul__", "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__", "__ilshift__",
        "__irshift__", "__iand__", "__ixor__", "__ior__", "__neg__", "__pos__", "__abs__",
        "__invert__", "__complex__", "__int__", "__float__", "__index__", "__round__",
        "__trunc__", "__floor__", "__ceil__", "__copy__", "__deepcopy__", "__getstate__",
        "__setstate__", "__sizeof__", "__del__", "__get__", "__set__", "__delete__",
        "__init_subclass__",
    }
)  # fmt: skip
# Dunder names a module or class body may bind, besides the special methods.
BINDABLE_DUNDERS = frozenset({"__all__", "__doc__", "__slots__", "__version__", "__author__", "__annotations__"})
# Readable as plain names: what a module knows about itself.
READABLE_DUNDER_NAMES = frozenset({"__name__", "__file__", "__doc__", "__all__", "__version__", "__author__"})
# Own objects: ``vars(self)`` and ``self.__dict__`` are the student's own data.
OWN_ONLY_DUNDERS = frozenset({"__dict__"})
# Refused by name on any object, statically: the frames, code, generators and tracebacks of the
# interpreter, reached through public attribute names.
INTERPRETER_INTERNALS = frozenset(
    {
        "tb_frame", "tb_next", "f_back", "f_builtins", "f_code", "f_generator", "f_globals",
        "f_locals", "f_trace", "co_code", "gi_frame", "gi_code", "gi_yieldfrom", "cr_await",
        "cr_frame", "cr_code", "cr_origin", "ag_await", "ag_frame", "ag_code",
    }
)  # fmt: skip
# getattr with a literal name keeps every attribute a submission can read visible in the source,
# where the forbidden-operation check reads it (``getattr(F, name)`` could fetch any kernel).
# setattr, delattr and hasattr may compute the name: the write guard and the read guard decide.
NAMED_ATTRIBUTE_BUILTINS = frozenset({"getattr"})
# Module settings a submission may change: switches of its own process, not functions.
WRITABLE_MODULE_ATTRIBUTES: dict[str, frozenset[str]] = {
    "torch.backends.cudnn": frozenset({"deterministic", "benchmark", "enabled"}),
}
MAX_SOURCE_BYTES = 1_000_000  # a real exercise module is ~10 kB
