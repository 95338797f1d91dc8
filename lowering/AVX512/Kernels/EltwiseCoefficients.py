#!/usr/bin/env python3
"""Fits the polynomial coefficients of EltwiseInjector.cpp.

Each fit is a near-minimax polynomial for the error that matters (relative
unless said), found by Lawson's iteration (iteratively reweighted least
squares) on Chebyshev nodes, in double. The coefficients are printed rounded
to f32, as pasted into EltwiseInjector.cpp, with the fit's own error; the
errors of the finished kernels are measured by the unit test.

Usage: /usr/bin/python3 EltwiseCoefficients.py   (needs numpy)
"""
import math

import numpy as np


def chebyshev_nodes(lo, hi, n=4000):
    k = np.arange(n)
    x = np.cos((2 * k + 1) * np.pi / (2 * n))
    return np.sort(0.5 * (lo + hi) + 0.5 * (hi - lo) * x)


def minimax(x, y, weight, degree, iters=300):
    """Coefficients c (low order first) minimising max |weight (p(x) - y)|."""
    a = np.vstack([x**i for i in range(degree + 1)]).T
    u = np.full(len(y), 1.0 / len(y))
    for _ in range(iters):
        w = np.sqrt(u) * weight
        c, *_ = np.linalg.lstsq(a * w[:, None], y * w, rcond=None)
        e = np.abs(weight * (a @ c - y))
        u *= e
        u /= u.sum()
    return c, np.max(np.abs(weight * (a @ c - y)))


def show(name, coeffs, err):
    print(f"{name}: fit error {err:.2e}")
    print("  " + ", ".join("%.9ef" % np.float32(c) for c in coeffs))


erf = np.vectorize(math.erf)
erfc = np.vectorize(math.erfc)

# exp(r) = 1 + r + r^2 q(r) on |r| <= ln2/2, relative error.
r = chebyshev_nodes(-math.log(2) / 2, math.log(2) / 2)
r = r[np.abs(r) > 1e-6]
c, e = minimax(r, (np.expm1(r) - r) / r**2, r**2 / np.exp(r), 4)
show("exp q (coefficients of r^2 .. r^6)", c, e)

# tanh(x) = x + x^3 P(x^2) on |x| < 0.625, relative error.
x = chebyshev_nodes(1e-4, 0.625)
c, e = minimax(x * x, (np.tanh(x) - x) / x**3, x**3 / np.tanh(x), 4)
show("tanh P", c, e)

# erf(x) = x P(x^2) on |x| < 0.875, relative error.
x = chebyshev_nodes(1e-4, 0.875)
c, e = minimax(x * x, erf(x) / x, x / erf(x), 5)
show("erf P", c, e)

# erfc(a) = exp(-a^2) R(t), t = 1 / (1 + 0.5 a), a in [0, 10], relative:
# from 0 on, so that gelu needs no other branch near 0.
a = chebyshev_nodes(0.0, 10.0, 8000)
g = erfc(a) * np.exp(a * a)
c, e = minimax(1 / (1 + 0.5 * a), g, 1 / g, 9, iters=1000)
show("erfc R", c, e)

# log1p(f) = f + f^2 R(f) on [-0.25, 0.5), relative error: log's mantissa
# m in [0.75, 1.5) less 1, and softplus's log1p of (0, 1] folded there.
f = chebyshev_nodes(-0.25, 0.5)
f = f[np.abs(f) > 1e-6]
c, e = minimax(f, (np.log1p(f) - f) / f**2, f**2 / np.log1p(f), 8)
show("log1p R", c, e)
