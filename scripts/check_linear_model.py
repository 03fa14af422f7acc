#!/usr/bin/env python3
"""Round trip of `hydraulink linearize`: loads DIR/linear_model.json with numpy and checks that
A x matches the model's own nonlinear right-hand side along small perturbations x (the
`rhs_check` section, computed by hydraulink from the nonlinear model), row by row, and that the
CSV files carry the same matrices and names.

    python3 scripts/check_linear_model.py out/fourbar3d/linearize [--rtol 1e-5]

Exit code 0 when every row agrees, 1 otherwise. Needs numpy.
"""
import argparse
import csv
import json
import os
import sys

import numpy as np


def load_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    cols = rows[0][1:]
    names = [r[0] for r in rows[1:]]
    m = np.array([[float(v) for v in r[1:]] for r in rows[1:]]).reshape(len(names), len(cols))
    return names, cols, m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--rtol", type=float, default=1e-5)
    args = ap.parse_args()
    with open(os.path.join(args.dir, "linear_model.json")) as f:
        d = json.load(f)
    A = np.array(d["A"], dtype=float)
    B = np.array(d["B"], dtype=float).reshape(len(d["states"]), len(d["inputs"]))
    C = np.array(d["C"], dtype=float).reshape(len(d["outputs"]), len(d["states"]))
    states = d["states"]
    assert A.shape == (len(states), len(states)), A.shape
    # CSV files: same names, same numbers
    for key, rows, cols, m in [("A", states, states, A), ("B", states, d["inputs"], B),
                               ("C", d["outputs"], states, C)]:
        rn, cn, mc = load_csv(os.path.join(args.dir, key + ".csv"))
        assert rn == rows and cn == cols, key + ".csv names"
        assert np.array_equal(mc, m), key + ".csv values"
    # eigenvalues of A (numpy) against the listed ones
    lam = np.linalg.eigvals(A)
    listed = np.array([e["re"] + 1j * e["im"] for e in d["eigenvalues"]])
    rho = max(abs(lam))
    for l in listed:
        assert min(abs(lam - l)) <= 1e-6 * rho, ("eigenvalue", l)
    chk = d["rhs_check"]
    failures = 0
    for x, f in zip(chk["directions"], chk["rhs_derivative"]):
        x = np.array(x)
        f = np.array(f)
        ax = A @ x
        j = int(np.argmax(abs(x)))
        for i in range(len(states)):
            row_scale = float(np.sum(abs(A[i, :]) * max(abs(x))))
            # + 1e-12 absolute: rows that A leaves zero see rounding noise of the index-1 solve
            tol = args.rtol * max(abs(ax[i]), abs(f[i])) + 1e-8 * row_scale + 1e-12
            if abs(ax[i] - f[i]) > tol:
                failures += 1
                print(f"MISMATCH direction {states[j]}, row {states[i]}: A x = {ax[i]:.6e}, "
                      f"nonlinear = {f[i]:.6e}")
    n = len(chk["directions"]) * len(states)
    print(f"{d['model']} ({d['method']}): {n - failures}/{n} rows of A x match the nonlinear "
          f"right-hand side (rtol {args.rtol:g}); {len(listed)} eigenvalues confirmed by numpy")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
