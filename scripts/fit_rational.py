#!/usr/bin/env python3
"""Fits the odd rational functions of engine/backends/halide/elementwise_template.cpp (erf for Gelu,
tanh for Tanh and Gelu's tanh form):

    f(z) ~ z * P(z^2) / Q(z^2),  0 <= z <= LIMIT,  Q(0) = 1,  P of degree 6, Q of degree 4

where f(LIMIT) rounds to 1 in float32 (the kernel clamps z to [-LIMIT, LIMIT]),
by linearized least squares in 50-digit arithmetic (mpmath, python3-mpmath), reweighted by 1/Q
(Loeb) and then by the error (Lawson) towards the minimax fit. Prints the worst absolute error
in exact arithmetic and of the float32 evaluation (Horner with fused multiply-add), and the
coefficients to paste.

    python3 scripts/fit_rational.py erf 3.9
    python3 scripts/fit_rational.py tanh 9
"""
import math
import struct
import sys

import mpmath as mp

mp.mp.dps = 50
NUM, DEN = 7, 5  # coefficients of P and of Q (Q's first is 1)
ITERATIONS = 15


def f32(v):
    return struct.unpack('f', struct.pack('f', float(v)))[0]


def horner(coefficients, t, rounding=lambda v: v):
    acc = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        acc = rounding(acc * t + c)
    return acc


def fit(f, limit):
    points = [limit * (1 - mp.cos(mp.pi * (i + 0.5) / 400)) / 2 for i in range(400)]
    lawson = [mp.mpf(1)] * len(points)
    weights = [mp.mpf(1)] * len(points)
    for iteration in range(ITERATIONS):
        rows, rhs = [], []
        for z, w in zip(points, weights):
            t, e = z * z, f(z)
            rows.append([w * z * t**k for k in range(NUM)] + [-w * e * t**k for k in range(1, DEN)])
            rhs.append(w * e)
        a, b = mp.matrix(rows), mp.matrix(rhs)
        solution = mp.lu_solve(a.T * a, a.T * b)
        p = [solution[k] for k in range(NUM)]
        q = [mp.mpf(1)] + [solution[NUM + k] for k in range(DEN - 1)]
        errors = [abs(z * horner(p, z * z) / horner(q, z * z) - f(z)) for z in points]
        if iteration >= 3:
            lawson = [l * e for l, e in zip(lawson, errors)]
            total = sum(lawson)
            lawson = [l / total * len(lawson) for l in lawson]
        weights = [mp.sqrt(l) / abs(horner(q, z * z)) for l, z in zip(lawson, points)]
    return p, q, max(errors)


def main():
    name, limit = sys.argv[1], float(sys.argv[2])
    functions = {'erf': (mp.erf, math.erf), 'tanh': (mp.tanh, math.tanh)}
    if name not in functions:
        sys.exit('usage: fit_rational.py erf|tanh LIMIT')
    exact_f, float_f = functions[name]
    p, q, exact = fit(exact_f, limit)
    pf, qf = [f32(v) for v in p], [f32(v) for v in q]
    worst = 0.0
    for i in range(20001):
        z = f32(limit * i / 20000)
        t = f32(z * z)
        y = f32(f32(z * horner(pf, t, f32)) / horner(qf, t, f32))
        worst = max(worst, abs(y - float_f(z)))
    print('max abs error: exact arithmetic %s, float32 evaluation %.2e' % (mp.nstr(exact, 3), worst))
    print('P:', ', '.join('%.9ef' % v for v in pf))
    print('Q:', ', '.join('%.9ef' % v for v in qf))


if __name__ == '__main__':
    main()
