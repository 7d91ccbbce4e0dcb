"""tcx: tensor contractions through libtcx's device API (libtcx(3)).

    import numpy as np, tcx
    c = tcx.einsum("ik,kj->ij", a, b)            # NumPy arrays: copied in and out
    p = tcx.plan("abcd,ebd->aec", a, b)          # planned and compiled once
    for _ in range(100):
        p(a, b, out=c)

NumPy arrays go through tcx_plan_execute_host: the operands are copied to
the device and C back, in the arrays' own strides.  Arrays with
``__cuda_array_interface__`` (CuPy arrays, PyTorch CUDA tensors) go through
tcx_plan_execute on their device pointers, with no copy, on the stream the
array names (or the library's current stream).

libtcx is found as $TCX_LIBRARY names it, else on the system's library path
(libtcx.so.0, as tcx installs it), else in a tcx build folder beside this
source (build/lib/libtcx.so).
"""

import ctypes
import ctypes.util
import os
import threading

__all__ = ["einsum", "plan", "Plan", "Error", "devices_default", "library_path"]
__version__ = "0.1.0"

# --- libtcx ---------------------------------------------------------------

_STATUS = [
    "TCX_OK", "TCX_ENOMEM", "TCX_EINVAL", "TCX_EPARSE", "TCX_ENODEV", "TCX_EBUILD",
    "TCX_ELAUNCH", "TCX_EMISMATCH", "TCX_EIO", "TCX_EDEVICE", "TCX_EUNSUPPORTED",
    "TCX_ERANGE", "TCX_EREJECT", "TCX_EREGRESS", "TCX_EINTR", "TCX_EBUSY", "TCX_ETIMEOUT",
    "TCX_ECORRUPT", "TCX_ELIMIT", "TCX_EINCOMPLETE",
]
_EINVAL, _EPARSE, _ENODEV, _ERANGE = 2, 3, 4, 11
_NATIVE_CONTEXT = 0


class Error(RuntimeError):
    """A failure libtcx reported: .status is its enum tcx_status value, .name
    its name (``"TCX_ENODEV"``), str() its message."""

    def __init__(self, status, message):
        self.status = status
        self.name = _STATUS[status] if 0 <= status < len(_STATUS) else str(status)
        super().__init__(f"{message} ({self.name})")


class _Err(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("native", ctypes.c_int), ("line", ctypes.c_uint),
                ("col", ctypes.c_uint), ("msg", ctypes.c_char * 512)]


def _candidates():
    env = os.environ.get("TCX_LIBRARY")
    if env:
        return [env]
    found = ["libtcx.so.0"]
    name = ctypes.util.find_library("tcx")
    if name:
        found.append(name)
    here = os.path.dirname(os.path.abspath(__file__))
    for top in (os.path.join(here, "..", ".."), os.path.join(here, "..")):
        found.append(os.path.normpath(os.path.join(top, "build", "lib", "libtcx.so")))
    return found


_lib = None
_lib_path = None
_lock = threading.Lock()


def _load():
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    tried = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path}: {e}")
            continue
        _declare(lib)
        _lib, _lib_path = lib, path
        return lib
    raise ImportError("tcx: cannot load libtcx (set TCX_LIBRARY to its path, or install "
                      "tcx): " + "; ".join(tried))


def _declare(lib):
    P, I64P, E = ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(_Err)
    D = ctypes.POINTER(ctypes.c_double)
    sig = {
        "tcx_contraction_parse": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_int,
                                                 ctypes.POINTER(P), E]),
        "tcx_contraction_destroy": (None, [P]),
        "tcx_contraction_num_indices": (ctypes.c_int, [P]),
        "tcx_contraction_index_name": (ctypes.c_char_p, [P, ctypes.c_int]),
        "tcx_device_open": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(P), E]),
        "tcx_device_close": (None, [P]),
        "tcx_device_id": (ctypes.c_char_p, [P]),
        "tcx_device_native": (P, [P, ctypes.c_int]),
        "tcx_plan_create": (ctypes.c_int, [P, P, I64P, I64P, I64P, I64P, ctypes.c_char_p,
                                           ctypes.POINTER(P), E]),
        "tcx_plan_destroy": (None, [P]),
        "tcx_plan_bytes": (ctypes.c_size_t, [P, ctypes.c_char]),
        "tcx_plan_describe": (None, [P, ctypes.c_char_p, ctypes.c_size_t]),
        "tcx_plan_execute": (ctypes.c_int, [P, P, P, P, P, D, D, E]),
        "tcx_plan_execute_host": (ctypes.c_int, [P, P, P, P, D, D, E]),
        "tcx_version": (ctypes.c_char_p, []),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args


def library_path():
    """The path libtcx was loaded from."""
    _load()
    return _lib_path


def _check(status, err):
    if status != 0:
        msg = err.msg.decode("utf-8", "replace")
        if status in (_EINVAL, _EPARSE, _ERANGE):
            e = Error(status, msg)
            raise ValueError(str(e)) from e
        raise Error(status, msg)


# --- types ------------------------------------------------------------------

# numpy dtype kind+itemsize (typestr without byte order) -> enum tcx_dtype
_DTYPES = {"f4": 0, "f8": 1, "c8": 2, "c16": 3, "f2": 4}


def _typestr_key(typestr):
    # "<f4", "|f2" -> "f4"; big-endian data is not the device's
    if typestr[0] == ">":
        raise ValueError(f"tcx: big-endian data ({typestr}) is not supported")
    key = typestr[1:]
    if key not in _DTYPES:
        raise TypeError(f"tcx: element type {typestr} is not supported "
                        "(float16, float32, float64, complex64, complex128)")
    return key


# --- devices ----------------------------------------------------------------

_devices = {}


def _device(name):
    """The tcx_device of `name` (None: the default), opened once."""
    lib = _load()
    key = name or ""
    with _lock:
        if key not in _devices:
            dev, err = ctypes.c_void_p(), _Err()
            _check(lib.tcx_device_open(key.encode() if key else None, ctypes.byref(dev),
                                       ctypes.byref(err)), err)
            _devices[key] = dev
        return _devices[key]


def devices_default():
    """The id of the device tcx uses when none is named ($TCX_DEVICE, else the
    first GPU, else the first OpenCL CPU device)."""
    return _load().tcx_device_id(_device(None)).decode()


# --- the expression -----------------------------------------------------------

def _explicit(expr):
    """expr with its output written out (NumPy's implicit form: the letters
    seen once, in alphabetical order), and its operands' letters (B's ""
    for an expression of one operand)."""
    expr = expr.replace(" ", "")
    if "." in expr:
        raise ValueError(f"tcx: '{expr}': ellipses (broadcasting) are not supported")
    lhs, arrow, out = expr.partition("->")
    ops = lhs.split(",")
    if len(ops) not in (1, 2):
        raise ValueError(f"tcx: '{expr}': one or two operands are needed, not {len(ops)}")
    if not arrow:
        seen = lhs.replace(",", "")
        out = "".join(sorted(ch for ch in set(seen) if seen.count(ch) == 1))
    if len(ops) == 1:
        return f"{ops[0]}->{out}", [ops[0], "", out]
    return f"{ops[0]},{ops[1]}->{out}", [ops[0], ops[1], out]


def _operand_b(expr, b):
    """b, checked against the number of operands expr has: None for one."""
    one = "," not in expr.partition("->")[0]
    if one and b is not None:
        raise ValueError(f"tcx: '{expr}' has one operand: give no b")
    if not one and b is None:
        raise ValueError(f"tcx: '{expr}' has two operands: give b")
    return b


# --- array views ------------------------------------------------------------------

class _View:
    """What the plan needs of an array: shape, element strides, type, pointer."""

    def __init__(self, obj, role):
        self.obj = obj
        cai = getattr(obj, "__cuda_array_interface__", None)
        if cai is not None:
            self.cuda = True
            self.shape = tuple(int(n) for n in cai["shape"])
            self.key = _typestr_key(cai["typestr"])
            self.ptr = int(cai["data"][0]) if cai["data"][0] else 0
            if role == "C" and cai["data"][1]:
                raise ValueError("tcx: the output is read-only")
            size = int(self.key[1:])
            st = cai.get("strides")
            if st is None:
                st, acc = [], 1
                for n in reversed(self.shape):
                    st.insert(0, acc * size)
                    acc *= max(n, 1)
            self.strides = _elements(st, size, role)
            self.stream = cai.get("stream")
        else:
            import numpy as np
            if role == "C":
                if not isinstance(obj, np.ndarray):
                    raise TypeError("tcx: out must be a NumPy array or a CUDA array")
                if not obj.flags.writeable:
                    raise ValueError("tcx: the output is read-only")
            else:
                obj = np.asarray(obj)
                # tcx takes positive strides: a broadcast or reversed view is copied
                if any(s <= 0 or s % obj.itemsize for s, n in zip(obj.strides, obj.shape)
                       if n > 1) or obj.dtype.byteorder == ">":
                    obj = np.ascontiguousarray(obj, dtype=obj.dtype.newbyteorder("="))
                self.obj = obj
            self.cuda = False
            self.shape = obj.shape
            self.key = _typestr_key(obj.dtype.str)
            self.ptr = obj.ctypes.data
            self.strides = _elements(obj.strides, obj.itemsize, role)


def _elements(strides, size, role):
    out = []
    for s in strides:
        s = int(s)
        if s % size:
            raise ValueError(f"tcx: {role} has a stride of {s} bytes, not a whole number "
                             "of elements")
        out.append(s // size)
    return out


def _positive(strides, shape):
    # the stride of an index of size 0 or 1 does not matter, and tcx wants it
    # positive; others are left for tcx to judge
    return [s if s > 0 or n > 1 else 1 for s, n in zip(strides, shape)]


# --- plans ------------------------------------------------------------------------

class Plan:
    """A contraction planned and compiled for one device, sizes, strides and
    type (tcx_plan_create).  Call it with arrays of that shape, type and
    layout: ``p(a, b, out=None, alpha=1, beta=0)`` returns C."""

    def __init__(self, expr, a, b=None, out=None, device=None, logic=None):
        lib = _load()
        self.expr, letters = _explicit(expr)
        _operand_b(self.expr, b)
        va = _View(a, "A")
        vb = _View(b, "B") if b is not None else None
        if vb is not None and va.key != vb.key:
            raise TypeError(f"tcx: A holds {va.key} but B holds {vb.key}: give both one type")
        if vb is not None and va.cuda != vb.cuda:
            raise TypeError("tcx: A and B must both be CUDA arrays or both host arrays")
        self.cuda = va.cuda
        self.key = va.key
        self.device = device
        self.letters = letters
        sizes = {}
        for v, lt, role in ((va, letters[0], "A"), (vb, letters[1], "B")):
            if v is None:
                continue
            if len(v.shape) != len(lt):
                raise ValueError(f"tcx: {role} has {len(v.shape)} dimensions but "
                                 f"'{self.expr}' gives it {len(lt)}")
            for ch, n in zip(lt, v.shape):
                if sizes.setdefault(ch, n) != n:
                    raise ValueError(f"tcx: index '{ch}' has size {n} in {role} but "
                                     f"{sizes[ch]} before")
        for ch in letters[2]:
            if ch not in sizes:
                raise ValueError(f"tcx: output index '{ch}' is in neither operand")
        self.shape = tuple(sizes[ch] for ch in letters[2])
        vc = None
        if out is not None:
            vc = _View(out, "C")
            if tuple(vc.shape) != self.shape:
                raise ValueError(f"tcx: out has shape {tuple(vc.shape)}, not {self.shape}")
            if vc.key != self.key or vc.cuda != self.cuda:
                raise TypeError("tcx: out must have A's type and live where A does")
        self.layout = (va.strides, vb.strides if vb else None, vc.strides if vc else None)

        err = _Err()
        c = ctypes.c_void_p()
        _check(lib.tcx_contraction_parse(self.expr.encode(), _DTYPES[self.key],
                                         ctypes.byref(c), ctypes.byref(err)), err)
        try:
            n = lib.tcx_contraction_num_indices(c)
            ids = [lib.tcx_contraction_index_name(c, k).decode() for k in range(n)]
            size_arr = (ctypes.c_int64 * n)(*[sizes[ch] for ch in ids])
            strides = []
            for v, role in ((va, "A"), (vb, "B"), (vc, "C")):
                if v is None:
                    strides.append(None)
                    continue
                st = _positive(v.strides, v.shape)
                strides.append((ctypes.c_int64 * max(len(st), 1))(*st))
            self._dev = _device(device if device is not None else
                                (_cuda_device(a) if self.cuda else None))
            plan = ctypes.c_void_p()
            _check(lib.tcx_plan_create(self._dev, c, size_arr, strides[0], strides[1],
                                       strides[2], logic.encode() if logic else None,
                                       ctypes.byref(plan), ctypes.byref(err)), err)
        finally:
            lib.tcx_contraction_destroy(c)
        self._plan = plan
        self._lib = lib
        self._cstrides = vc.strides if vc else None
        buf = ctypes.create_string_buffer(320)
        lib.tcx_plan_describe(plan, buf, 320)
        self.description = buf.value.decode()

    def __del__(self):
        plan = getattr(self, "_plan", None)
        if plan:
            self._lib.tcx_plan_destroy(plan)
            self._plan = None

    def __repr__(self):
        return (f"tcx.Plan('{self.expr}', shape {self.shape}, {self.key}, "
                f"{self.description})")

    def _scalars(self, alpha, beta):
        cplx = self.key.startswith("c")
        al = (ctypes.c_double * 2)(complex(alpha).real, complex(alpha).imag if cplx else 0)
        be = (ctypes.c_double * 2)(complex(beta).real, complex(beta).imag if cplx else 0)
        if not cplx and (complex(alpha).imag or complex(beta).imag):
            raise ValueError("tcx: complex alpha or beta for real data")
        return al, be

    def _output(self, a):
        if self.cuda:
            mod = type(a).__module__.split(".")[0]
            if mod == "cupy":
                import cupy
                return cupy.empty(self.shape, dtype=a.dtype)
            if mod == "torch":
                import torch
                return torch.empty(self.shape, dtype=a.dtype, device=a.device)
            raise TypeError("tcx: give out= for CUDA arrays of "
                            f"{type(a).__module__}.{type(a).__name__}")
        import numpy as np
        return np.empty(self.shape, dtype=np.dtype(self.key))

    def __call__(self, a, b=None, out=None, alpha=1, beta=0):
        lib = self._lib
        _operand_b(self.expr, b)
        va = _View(a, "A")
        vb = _View(b, "B") if b is not None else None
        fresh = out is None
        if fresh:
            if self._cstrides is not None and not self._packed_c():
                raise ValueError("tcx: this plan was made for an out= of other strides; "
                                 "give one")
            out = self._output(a)
        vc = _View(out, "C")
        for v, role, want in ((va, "A", self.layout[0]), (vb, "B", self.layout[1])):
            if v is None:
                continue
            if v.key != self.key or v.cuda != self.cuda:
                raise TypeError(f"tcx: {role} is not of the plan's type or place")
            if _positive(v.strides, v.shape) != _positive(want, v.shape) or \
                    len(v.shape) != len(want):
                raise ValueError(f"tcx: {role} has other strides or shape than the plan's; "
                                 "make a plan for it")
        if tuple(vc.shape) != self.shape:
            raise ValueError(f"tcx: out has shape {tuple(vc.shape)}, not {self.shape}")
        cst = self._cstrides if self._cstrides is not None else _packed(self.shape)
        if _positive(vc.strides, vc.shape) != _positive(cst, vc.shape):
            raise ValueError("tcx: out has other strides than the plan's; make a plan for it")
        if fresh and beta != 0:
            raise ValueError("tcx: beta needs out= (the C it scales)")
        al, be = self._scalars(alpha, beta)
        err = _Err()
        if self.cuda:
            stream = _stream(a, va.stream)
            _check(lib.tcx_plan_execute(self._plan, stream, va.ptr, vb.ptr if vb else None,
                                        vc.ptr, al, be, ctypes.byref(err)), err)
        else:
            _check(lib.tcx_plan_execute_host(self._plan, va.ptr, vb.ptr if vb else None,
                                             vc.ptr, al, be, ctypes.byref(err)), err)
        return out

    def _packed_c(self):
        return _positive(self._cstrides, self.shape) == _positive(_packed(self.shape),
                                                                  self.shape)


def _packed(shape):
    st, acc = [], 1
    for n in reversed(shape):
        st.insert(0, acc)
        acc *= max(n, 1)
    return st


def _cuda_device(a):
    """"cuda:N" for a CUDA array: PyTorch's tensor.device.index, CuPy's
    array.device.id, else device 0."""
    d = getattr(a, "device", None)
    for attr in ("index", "id"):
        n = getattr(d, attr, None)
        if isinstance(n, int):
            return f"cuda:{n}"
    return "cuda:0"


_LEGACY_STREAM = 1  # CU_STREAM_LEGACY: the default stream, as a stream handle


def _stream(a, cai_stream):
    """The stream to execute on: the array library's current stream, else the
    one its __cuda_array_interface__ names, else CUDA's legacy default
    stream.  The default stream (0) is passed as CU_STREAM_LEGACY, so that
    the kernels are ordered after the library's work there and execute does
    not wait."""
    mod = type(a).__module__.split(".")[0]
    handle = None
    try:
        if mod == "torch":
            import torch
            handle = torch.cuda.current_stream(a.device).cuda_stream
        elif mod == "cupy":
            import cupy
            handle = cupy.cuda.get_current_stream().ptr
    except Exception:  # an older library: fall back on the interface's stream
        handle = None
    if handle is None and isinstance(cai_stream, int):
        handle = cai_stream
    return ctypes.c_void_p(handle or _LEGACY_STREAM)


# Plans of one process, by everything that makes them differ.
_plans = {}


def plan(expr, a, b=None, out=None, device=None, logic=None):
    """A Plan for expr on arrays like a, b (and out): their shapes, type,
    strides and device; b is None for an expression of one operand
    ("ij->ji", "ijk->ik").  Cached: the same arguments give the same plan."""
    va = _View(a, "A")
    vb = _View(b, "B") if b is not None else None
    vc = _View(out, "C") if out is not None else None
    key = (expr, va.key, va.cuda, tuple(va.shape), tuple(vb.shape) if vb else None,
           tuple(va.strides), tuple(vb.strides) if vb else None,
           tuple(vc.strides) if vc else None,
           tuple(vc.shape) if vc else None, device,
           _cuda_device(a) if va.cuda else None, logic)
    with _lock:
        p = _plans.get(key)
    if p is None:
        p = Plan(expr, a, b, out=out, device=device, logic=logic)
        with _lock:
            p = _plans.setdefault(key, p)
    return p


def einsum(expr, a, b=None, out=None, device=None, alpha=1, beta=0):
    """C = alpha * einsum(expr, a, b) + beta * out, on a tcx device.

    expr is NumPy's einsum notation for two operands ("ik,kj->ij"; an implicit
    output as NumPy forms it), or for one ("ij->ji", "ijk->ik"; then b is
    None).  a and b are NumPy arrays (copied to the
    device and C back) or CUDA arrays (__cuda_array_interface__: used where
    they are, no copies).  out receives C (a new array when None).  device is
    an id of `tcx devices` ("opencl:0:0", "cuda:0"); None: tcx's default.
    Plans are cached, so repeated calls compile nothing."""
    return plan(expr, a, b, out=out, device=device)(a, b, out=out, alpha=alpha, beta=beta)
