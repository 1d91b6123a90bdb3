"""The peers on numfuse's fusion suite: PyTorch eager ("torch"), torch.compile
("compile"), CuPy ("cupy") and JAX ("jax") running the workloads
bench/fusion_bench.cpp times, one framework per process:

    python3 bench/peers.py --fw torch|compile|cupy|jax [--quick] [--work a,b] [--out rows.jsonl]
    python3 bench/peers.py --fw torch|compile|cupy|jax|numpy --grid rows.jsonl [--out ...]

--grid runs the rows of bench/sweep_bench's grid (`sweep_bench --list`: each
row names its pattern, its inputs' shapes, dtype and axes) instead, so that
numfuse and its peers time the same statements; "numpy" runs them on the CPU.
Rows whose dtype a framework lacks (bfloat16 in CuPy and NumPy) are skipped.

Workloads, shapes, formulas and byte/flop counts are those of the reference
peer benchmark (shared/bench/peer_bench.py), and so are the rows, one JSON
line each: {"work", "shape", "fw", "us", "GBps" | "TFLOPs"[, "note"]}. GB/s
count each input read once and each output written once.

Timing, as the reference does it: three calls of warm-up, one call timed to
size a batch of about 50 ms, then the median over 5 batches (3 for the large
product) of back-to-back calls, each batch ended by waiting for the device.

Where this differs from the reference, on purpose:
  - torch.compile specialises each function to each shape (dynamic=False), as
    a user benchmarking one shape gets; the reference lets it go dynamic
    after the second shape;
  - JAX's f32 products run TF32 on this GPU by default. Here every product
    is full f32 (jax_default_matmul_precision "highest"), as in the other
    frameworks and numfuse, but the "tf32" row's, which asks for the default;
    the reference's "fp32" product and its RBM run TF32;
  - JAX's RBM draws with a key passed in, not one captured as a constant.
"""
import argparse
import functools
import json
import os
import statistics
import sys
import time
from typing import Callable, NamedTuple

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

F32 = 4
TORCH_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}
NUMPY_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}
ROW_SHAPES = [(128, 784), (4096, 4096), (8192, 8192), (32768, 1024), (1024, 32768)]
ROW_SHAPES_QUICK = [(128, 784), (8192, 8192)]
CHAIN_SHAPES = [(128, 784), (8192, 8192)]
ADAM_SIZES = [1 << 20, 1 << 26]
RBM_SHAPES = [(128, 784, 4096), (256, 2048, 4096)]
GEMM_SHAPE = (2000, 40000, 2000)


# ------------------------------------------------------------------ backends
# Each backend gives the workloads numpy's vocabulary: elementwise functions,
# row reductions that keep the reduced axis, random inputs, a way to wait for
# the device, and its compiler (or none).


class Backend:
    """What every backend has: numpy's elementwise functions from `module`,
    and by default no compiler and no random key."""

    def __init__(self, module, names=("sqrt", "exp", "tanh", "abs", "reciprocal")):
        for name in names:
            setattr(self, name, getattr(module, name))

    def key(self):
        return None

    def jit(self, f):
        return f


class Torch(Backend):
    def __init__(self, compiled):
        import torch

        super().__init__(torch, ("sqrt", "exp", "tanh", "abs", "reciprocal", "sigmoid"))
        self.t = torch
        self.compiled = compiled

    def randn(self, *s):
        return self.t.randn(*s, device="cuda", dtype=self.t.float32)

    def rand(self, *s):
        return self.t.rand(*s, device="cuda", dtype=self.t.float32)

    def mean(self, A):
        return A.mean(1, keepdim=True)

    def var(self, A):
        return A.var(1, keepdim=True, correction=0)

    def amax(self, A):
        return A.amax(1, keepdim=True)

    def sum(self, A):
        return A.sum(1, keepdim=True)

    def uniform_like(self, h, key):
        return self.t.rand_like(h)

    # The grid's vocabulary (sweep_bench's patterns).
    def array(self, shape, dtype):
        return self.t.randn(*shape, device="cuda", dtype=getattr(self.t, TORCH_DTYPES[dtype]))

    def relu(self, x):
        return self.t.relu(x)

    def permute(self, x, perm):
        return x.permute(*perm)

    def sum_axes(self, x, axes):
        return x.sum(dim=axes, keepdim=True)

    def mean_axes(self, x, axes):
        return x.mean(dim=axes, keepdim=True)

    def fresh(self):
        """Forget compiled functions: each grid row compiles for its own shapes
        (dynamo's cache of a function's shapes stops compiling at its limit)."""
        if self.compiled:
            self.t._dynamo.reset()

    def f32(self, x):
        return x.to(self.t.float32)

    def jit(self, f):
        return self.t.compile(f, dynamic=False) if self.compiled else f

    def products(self):
        """(note, product) for each precision: cuBLAS with or without TF32."""
        matmul = self.jit(_matmul)
        for note, tf32 in (("fp32", False), ("tf32", True)):
            self._allow_tf32(tf32)
            yield note, matmul
        self._allow_tf32(False)

    def _allow_tf32(self, on):
        settings = self.t.backends.cuda.matmul
        if hasattr(settings, "fp32_precision"):  # PyTorch 2.9 on; allow_tf32 is deprecated
            settings.fp32_precision = "tf32" if on else "ieee"
        else:
            settings.allow_tf32 = on

    def finish(self, result):
        self.t.cuda.synchronize()


class NumpyLike(Backend):
    """Row reductions and casts in numpy's spelling, as CuPy and JAX have them."""

    def __init__(self, xp):
        super().__init__(xp)
        self.xp = xp

    def mean(self, A):
        return A.mean(1, keepdims=True)

    def var(self, A):
        return A.var(1, keepdims=True)

    def amax(self, A):
        return A.max(1, keepdims=True)

    def sum(self, A):
        return A.sum(1, keepdims=True)

    def f32(self, x):
        return x.astype(self.xp.float32)

    # The grid's vocabulary (sweep_bench's patterns).
    def array(self, shape, dtype):
        if dtype == "bf16":
            return None  # neither CuPy nor NumPy has bfloat16
        return self.randn(*shape).astype(NUMPY_DTYPES[dtype])

    def relu(self, x):
        return self.xp.maximum(x, 0)

    def permute(self, x, perm):
        return self.xp.transpose(x, perm)

    def sum_axes(self, x, axes):
        return x.sum(axis=axes, keepdims=True)

    def mean_axes(self, x, axes):
        return x.mean(axis=axes, keepdims=True)

    def fresh(self):
        pass


class CuPy(NumpyLike):
    def __init__(self):
        import cupy

        super().__init__(cupy)

    def randn(self, *s):
        return self.xp.random.standard_normal(s, dtype=self.xp.float32)

    def rand(self, *s):
        return self.xp.random.random(s, dtype=self.xp.float32)

    def sigmoid(self, x):  # CuPy has none: numpy's spelling, as the reference writes it
        return 1 / (1 + self.xp.exp(-x))

    def uniform_like(self, h, key):
        return self.xp.random.random(h.shape, dtype=self.xp.float32)

    def products(self):
        yield "fp32", _matmul  # CuPy uses TF32 only when CUPY_TF32=1 at import

    def finish(self, result):
        self.xp.cuda.Device().synchronize()


class Jax(NumpyLike):
    def __init__(self):
        import jax
        import jax.numpy as jnp

        super().__init__(jnp)
        self.jax = jax
        # f32 products in f32, not JAX's default TF32: the precision the
        # other frameworks and numfuse use unless asked otherwise.
        jax.config.update("jax_default_matmul_precision", "highest")
        # f64 arrays in f64: without x64 JAX makes them f32, and a grid's f64
        # rows would time f32 work.
        jax.config.update("jax_enable_x64", True)
        self.sigmoid = jax.nn.sigmoid
        self.seed = 0

    def randn(self, *s):
        return self.jax.random.normal(self.key(), s, self.xp.float32)

    def rand(self, *s):
        return self.jax.random.uniform(self.key(), s, self.xp.float32)

    def uniform_like(self, h, key):
        return self.jax.random.uniform(key, h.shape, h.dtype)

    def array(self, shape, dtype):
        return self.jax.random.normal(self.key(), shape, getattr(self.xp, NUMPY_DTYPES[dtype]))

    def key(self):
        """A new key each call: for inputs, and for the RBM's draw (an argument of it)."""
        self.seed += 1
        return self.jax.random.PRNGKey(self.seed)

    def jit(self, f):
        return self.jax.jit(f)

    def products(self):
        from functools import partial

        P = self.jax.lax.Precision  # an explicit precision overrides the default
        for note, precision in (("fp32", P.HIGHEST), ("tf32", P.DEFAULT)):
            yield note, self.jit(partial(self.xp.matmul, precision=precision))

    def finish(self, result):
        self.jax.block_until_ready(result)


class NumPy(NumpyLike):
    """numpy on the CPU: the grid's statements as CPU users write them."""

    def __init__(self):
        import numpy

        super().__init__(numpy)
        self.rng = numpy.random.default_rng(0)

    def randn(self, *s):
        return self.rng.standard_normal(s, dtype=self.xp.float32)

    def rand(self, *s):
        return self.rng.random(s, dtype=self.xp.float32)

    def sigmoid(self, x):
        return 1 / (1 + self.xp.exp(-x))

    def uniform_like(self, h, key):
        return self.rng.random(h.shape, dtype=self.xp.float32)

    def products(self):
        yield "fp32", _matmul

    def finish(self, result):
        pass


# ----------------------------------------------------------------- workloads
# Written once for every backend, through the module-level `B`. Each is its
# own function, so that torch.compile keeps each one's compiled shapes apart.

B = None


def scale_copy(x):
    return x * 1.0


def layernorm(A, eps=1e-5):
    return B.reciprocal(B.sqrt(B.var(A) + eps)) * (A - B.mean(A))


def softmax(A):
    e = B.exp(A - B.amax(A))
    return e / B.sum(e)


def chain8(x, a, b):
    y = x * a + b
    y = y * B.sigmoid(y)
    y = B.tanh(y) * 0.5 + x * x
    return B.abs(y - 0.25) + B.exp(-x)


def adam(p, g, m, v, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    m2 = b1 * m + (1 - b1) * g
    v2 = b2 * v + (1 - b2) * g * g
    return p - lr * m2 / (B.sqrt(v2) + eps), m2, v2


def rbm_up(v, W, bh, key):
    h = B.sigmoid(v @ W + bh)
    return B.f32(B.uniform_like(h, key) < h), h


def _matmul(A, Bm):
    return A @ Bm


# sweep_bench's patterns, as it writes them (bench/sweep_bench.cpp, cases_of).
def grid_biased(x, c):
    return B.relu(x + c) * 2


def grid_transposed(x, y, axes):
    return B.permute(x, axes) + y


def grid_stepped(x):
    return x[::2] * 2


def grid_sum(x, axes):
    return B.sum_axes(x, axes)


def grid_centred(x, axes):
    return x - B.mean_axes(x, axes)


GRID = {
    "elementwise": grid_biased,
    "broadcast": grid_biased,
    "transposed": grid_transposed,
    "stepped": grid_stepped,
    "reduce": grid_sum,
    "reduce-back": grid_centred,
}


# ------------------------------------------------------------------- running


def seconds_per_call(f, args, batches=5, batch_seconds=0.05):
    for _ in range(3):
        B.finish(f(*args))
    t0 = time.perf_counter()
    B.finish(f(*args))
    one = time.perf_counter() - t0
    calls = max(3, min(2000, int(batch_seconds / max(one, 1e-6))))
    per_call = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(calls):
            r = f(*args)
        B.finish(r)
        per_call.append((time.perf_counter() - t0) / calls)
    return statistics.median(per_call)


def row(fw, work, shape, seconds, nbytes=None, flops=None, note=None):
    r = dict(work=work, shape=str(shape), fw=fw, us=round(seconds * 1e6, 2))
    if nbytes:
        r["GBps"] = round(nbytes / seconds / 1e9, 1)
    if flops:
        r["TFLOPs"] = round(flops / seconds / 1e12, 2)
    if note:
        r["note"] = note
    return r


class Case(NamedTuple):
    work: str
    shape: tuple
    f: Callable
    make_args: Callable  # the inputs, made when the case runs: one case's arrays live at a time
    nbytes: int = None
    flops: int = None


def read_write(shape):
    """Bytes of reading one f32 array of the shape and writing one like it."""
    return 2 * shape[0] * shape[1] * F32


def cases(quick):
    """The reference's workloads and shapes, in its order (the product aside)."""
    s = (8192, 8192)
    yield Case("scale_copy", s, scale_copy, lambda s=s: (B.randn(*s),), read_write(s))
    for s in ROW_SHAPES_QUICK if quick else ROW_SHAPES:
        yield Case("layernorm", s, layernorm, lambda s=s: (B.randn(*s),), read_write(s))
        yield Case("softmax", s, softmax, lambda s=s: (B.randn(*s),), read_write(s))
    for s in CHAIN_SHAPES:
        yield Case("chain8", s, chain8, lambda s=s: (B.randn(*s), 1.5, 0.25), read_write(s))
    for n in ADAM_SIZES:
        # reads p, g, m, v; writes p, m, v
        make = lambda n=n: (B.randn(n), B.randn(n), B.randn(n), B.rand(n))  # noqa: E731
        yield Case("adam", (n,), adam, make, 7 * n * F32)
    for b, nv, nh in RBM_SHAPES:
        make = lambda b=b, nv=nv, nh=nh: (  # noqa: E731
            B.rand(b, nv), B.randn(nv, nh) * 0.1, B.randn(1, nh), B.key())
        yield Case("rbm_up", (b, nv, nh), rbm_up, make, flops=2 * b * nv * nh)


def run(fw, quick, works):
    rows = []

    def emit(r):
        rows.append(r)
        print(json.dumps(r), flush=True)

    for c in cases(quick):
        if not works or c.work in works:
            t = seconds_per_call(jitted(c.f), c.make_args())
            emit(row(fw, c.work, c.shape, t, c.nbytes, c.flops))
    if not works or "gemm_cudamat" in works:
        m, k, n = GEMM_SHAPE
        A, Bm = B.randn(m, k), B.randn(k, n)
        for note, product in B.products():
            t = seconds_per_call(product, (A, Bm), batches=3)
            emit(row(fw, "gemm_cudamat", GEMM_SHAPE, t, flops=2 * m * k * n, note=note))
    return rows


def run_grid(fw, path):
    """Times each row of `sweep_bench --list` (in `path`), one at a time."""
    rows = []
    with open(path) as fh:
        grid = [json.loads(line) for line in fh if line.startswith("{")]
    for g in grid:
        f = GRID[g["work"]]
        if g["axes"]:  # the reduced axes, or the view's permutation: part of the function
            f = functools.partial(f, axes=tuple(g["axes"]))
        args = [B.array(tuple(shape), g["dtype"]) for shape in g["inputs"]]
        if any(a is None for a in args):
            continue
        B.fresh()
        t = seconds_per_call(B.jit(f), args)
        r = dict(work=g["work"], operand=g["operand"], form=g["form"], shape=g["shape"],
                 dtype=g["dtype"], fw=fw, bytes=g["bytes"], us=round(t * 1e6, 2),
                 GBps=round(g["bytes"] / t / 1e9, 1))
        rows.append(r)
        print(json.dumps(r), flush=True)
    return rows


_jitted = {}


def jitted(f):
    """One compiled function per workload, kept across its shapes."""
    if f not in _jitted:
        _jitted[f] = B.jit(f)
    return _jitted[f]


def main():
    global B
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fw", required=True, choices=["torch", "compile", "cupy", "jax", "numpy"])
    p.add_argument("--quick", action="store_true", help="layernorm and softmax on two shapes")
    p.add_argument("--work", default="", help="comma-separated workloads (default: all)")
    p.add_argument("--out", help="append the rows to this JSON-lines file")
    p.add_argument("--grid", help="run these rows of `sweep_bench --list` instead")
    args = p.parse_args()
    make = {"torch": lambda: Torch(False), "compile": lambda: Torch(True), "cupy": CuPy, "jax": Jax,
            "numpy": NumPy}
    B = make[args.fw]()
    works = set(w for w in args.work.split(",") if w)
    rows = run_grid(args.fw, args.grid) if args.grid else run(args.fw, args.quick, works)
    if args.out:
        with open(args.out, "a") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    sys.exit(main())
