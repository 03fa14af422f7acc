#!/usr/bin/env python3
"""Design and check of the linkage of models/loader.toml (issue 24, item 5).

The loader is planar with two open revolute joints: the boom turns about O on the mast (z1),
the bucket about the boom tip C (z2, relative to the boom). Each is driven by one cylinder whose
ends sit on the two bodies the joint connects, so the cylinder's pin-to-pin length is a function
of that joint angle alone:

    L(z)² = |P_rod(z) − P_base|²,   dL/dz = lever arm of the cylinder about the joint [m].

The joint rate per unit stroke is dz/ds = 1/(dL/dz). It keeps its sign over the stroke exactly
when dL/dz does not pass through zero (the dead centre: the cylinder's line through the joint).
This script:

* `design` (default): places the pins from the design targets below and prints the marker
  coordinates, strokes and retracted lengths to put into models/loader.toml;
* `--check MODEL`: reads the model file and checks it: the lever arm of each cylinder keeps its
  sign and stays above a minimum over the whole stroke, the bucket's roll-back at the ground and
  dump at full height, the pivot-pin height at full lift, the lift capacity at the pin at full
  height at the relief valve's cracking pressure. Exit status 1 when a check fails.

Targets: a pivot-pin height of about 2.7–2.8 m at full lift (the Kioti NS5310H and Kubota MX5400
loaders, 106.3 in and 111.2 in; M. Campbell, "Interpreting Loader Lift Capacity", Jamesons
Tractor, 2023); a bucket roll-back of about 40–45° at the ground and a dump of 45–60° at full
height (the issue's targets for a tractor loader). Geometry convention of models/README.md: the
reference configuration has every joint at zero, the boom along +x from O at the origin.

Needs Python ≥ 3.11 (tomllib) and numpy.
"""

import argparse
import math
import sys
import tomllib

import numpy as np

G_ACC = 9.81
# Pivot O 2.0 m above the ground (the ground is y = −2 m in the model).
GROUND_Y = -2.0
BOOM_LENGTH = 2.6  # O → C [m]
# The bucket: COM 0.35 m ahead of and 0.15 m below C when level, cutting edge 0.45 m below C.
BUCKET_MASS = 250.0
BUCKET_COM = np.array([0.35, -0.15])
BOOM_MASS = 300.0
BOOM_COM_X = 1.3

# ---- design targets -------------------------------------------------------------------------
PIN_HEIGHT_TOP = 2.75  # pivot pin above the ground at full lift [m]
PIN_HEIGHT_LOW = 0.40  # at full lowering: the cutting edge 0.05 m below the ground, level
ROLLBACK_AT_GROUND_DEG = 42.0
DUMP_AT_TOP_DEG = 55.0
# Lift cylinder: base G on the mast, rod pin B on the boom.
LIFT_G = np.array([-0.5, -1.2])
LIFT_B = np.array([0.7, 0.0])
# Tilt cylinder: base T on the boom d_T behind C and alpha above the boom line; rod pin K on the
# bucket, r_K from C. Its angle beta0 (from the boom axis, in the reference pose) follows from
# the roll-back end: the angle T–C–K is THETA_MIN there (retracted), and PI − margin at the dump
# end (extended).
TILT_D = 1.2
TILT_ALPHA_DEG = 10.0
TILT_R = 0.3
TILT_THETA_MIN_DEG = 14.0
MIN_LEVER_ARM = 0.05  # [m]: the check's margin from the dead centre


def rot(z):
    c, s = math.cos(z), math.sin(z)
    return np.array([[c, -s], [s, c]])


class Loader:
    """The loader's pins in the reference configuration and its cylinder data."""

    def __init__(self, g, b, t, k, lift, tilt, relief_pa, tank_pa):
        self.C = np.array([BOOM_LENGTH, 0.0])
        self.G, self.B, self.T, self.K = map(np.asarray, (g, b, t, k))
        self.lift, self.tilt = lift, tilt  # dicts: retracted, stroke, dp, dr
        self.relief_pa, self.tank_pa = relief_pa, tank_pa

    # pin-to-pin lengths as functions of the joint angles
    def lift_length(self, z1):
        return float(np.linalg.norm(rot(z1) @ self.B - self.G))

    def tilt_length(self, z2):
        # both pins in the boom frame: T fixed, K turned by z2 about C
        k = self.C + rot(z2) @ (self.K - self.C)
        return float(np.linalg.norm(k - self.T))

    def pin_height(self, z1):
        return (rot(z1) @ self.C)[1] - GROUND_Y


def lever_arms(length_of, z_lo, z_hi, n=2001):
    """dL/dz [m] at n angles over [z_lo, z_hi] by central differences (h = 1e-6 rad)."""
    zs = np.linspace(z_lo, z_hi, n)
    h = 1e-6
    return zs, np.array([(length_of(z + h) - length_of(z - h)) / (2 * h) for z in zs])


def reachable(length_of, retracted, stroke, q0, dz=1e-4):
    """The interval of joint angles reached over the stroke: from the initial angle q0, the
    angle is walked both ways while the pin-to-pin length stays inside
    [retracted, retracted + stroke] (at most half a turn each way)."""
    inside = lambda z: retracted <= length_of(z) <= retracted + stroke  # noqa: E731
    if not inside(q0):
        raise ValueError(f"the initial angle {q0} rad is outside the stroke")
    ends = []
    for step in (-dz, dz):
        z = q0
        while inside(z + step) and abs(z + step - q0) < math.pi:
            z += step
        # refine the end to the stroke limit by bisection between z (in) and z + step (out)
        a, b = z, z + step
        for _ in range(60):
            m = 0.5 * (a + b)
            a, b = (m, b) if inside(m) else (a, m)
        ends.append(a)
    return ends[0], ends[1]


def area(d):
    return math.pi / 4 * d * d


def lift_capacity(ld, z1, z2_abs=0.0):
    """Payload [kg] at the pivot pin C that the lift cylinder holds at boom angle z1 with the
    piston side at the relief's cracking pressure and the rod side at the tank's, by virtual
    work: F dL/dz1 = moments of the boom, the empty bucket (at absolute angle z2_abs) and the
    payload about O. Returns (with the bucket on, with the bucket off)."""
    c = ld.lift
    ap, ar = area(c["dp"]), area(c["dp"]) - area(c["dr"])
    force = ld.relief_pa * ap - ld.tank_pa * ar
    h = 1e-6
    arm = (ld.lift_length(z1 + h) - ld.lift_length(z1 - h)) / (2 * h)
    moment = force * arm
    x_pin = BOOM_LENGTH * math.cos(z1)
    m_boom = BOOM_MASS * G_ACC * BOOM_COM_X * math.cos(z1)
    x_bucket = x_pin + (rot(z2_abs) @ BUCKET_COM)[0]
    m_bucket = BUCKET_MASS * G_ACC * x_bucket
    on = (moment - m_boom - m_bucket) / (x_pin * G_ACC)
    off = (moment - m_boom) / (x_pin * G_ACC)
    return on, off, force, arm


def design():
    # boom limits from the pin heights
    z1_hi = math.asin((PIN_HEIGHT_TOP + GROUND_Y) / BOOM_LENGTH)
    z1_lo = math.asin((PIN_HEIGHT_LOW + GROUND_Y) / BOOM_LENGTH)
    # bucket limits (relative to the boom): roll-back at the ground, dump at the top
    z2_hi = math.radians(ROLLBACK_AT_GROUND_DEG) - z1_lo
    z2_lo = -math.radians(DUMP_AT_TOP_DEG) - z1_hi
    a = math.radians(TILT_ALPHA_DEG)
    C = np.array([BOOM_LENGTH, 0.0])
    T = C + TILT_D * np.array([-math.cos(a), math.sin(a)])
    # angle T–C–K = (π − α) − (β0 + z2) = θ_min at z2 = z2_hi
    beta0 = math.pi - a - math.radians(TILT_THETA_MIN_DEG) - z2_hi
    K = C + TILT_R * np.array([math.cos(beta0), math.sin(beta0)])
    ld = Loader(LIFT_G, LIFT_B, T, K, None, None, 0.0, 0.0)
    l1 = (ld.lift_length(z1_lo), ld.lift_length(z1_hi))
    l2 = (ld.tilt_length(z2_hi), ld.tilt_length(z2_lo))
    print(f"boom z1 in [{math.degrees(z1_lo):.3f}, {math.degrees(z1_hi):.3f}] deg")
    print(f"bucket z2 in [{math.degrees(z2_lo):.3f}, {math.degrees(z2_hi):.3f}] deg")
    print(f"B = {LIFT_B.tolist()}, G = {LIFT_G.tolist()}")
    print(f"lift: retracted_length_m = {l1[0]:.4f}, stroke_m = {l1[1] - l1[0]:.4f}")
    print(f"T = [{T[0]:.4f}, {T[1]:.4f}], K = [{K[0]:.4f}, {K[1]:.4f}]")
    print(f"tilt: retracted_length_m = {l2[0]:.4f}, stroke_m = {l2[1] - l2[0]:.4f}")


def cylinder(spec, name):
    c = next(c for c in spec["hydraulics"]["cylinders"] if c["name"] == name)
    return {
        "retracted": c["retracted_length_m"],
        "stroke": c["stroke_m"],
        "dp": c["piston_diameter_m"],
        "dr": c["rod_diameter_m"],
    }


def check(path):
    with open(path, "rb") as f:
        spec = tomllib.load(f)
    ground = spec["ground"]["markers"]
    bodies = {b["name"]: b for b in spec["bodies"]}
    boom, bucket = bodies["boom"]["markers"], bodies["bucket"]["markers"]
    relief = next(e for e in spec["elements"] if e.get("name") == "relief")
    tank = spec["hydraulics"]["tanks"][0]["pressure_pa"]
    ld = Loader(
        ground["G"][:2],
        boom["B"][:2],
        boom["T"][:2],
        bucket["K"][:2],
        cylinder(spec, "lift"),
        cylinder(spec, "tilt"),
        relief["cracking_pressure_pa"],
        tank,
    )
    ok = True

    def verdict(cond, text):
        nonlocal ok
        ok &= bool(cond)
        print(("ok    " if cond else "FAIL  ") + text)

    # the joint interval each stroke reaches from the initial pose
    q0 = {j["name"]: j["q0"] for j in spec["joints"]}
    z1_lo, z1_hi = reachable(ld.lift_length, ld.lift["retracted"], ld.lift["stroke"], q0["z1"])
    z2_lo, z2_hi = reachable(ld.tilt_length, ld.tilt["retracted"], ld.tilt["stroke"], q0["z2"])
    for name, f, lo, hi in [
        ("lift", ld.lift_length, z1_lo, z1_hi),
        ("tilt", ld.tilt_length, z2_lo, z2_hi),
    ]:
        zs, arms = lever_arms(f, lo, hi)
        same_sign = np.all(arms > 0) or np.all(arms < 0)
        smallest = float(np.min(np.abs(arms)))
        where = float(zs[np.argmin(np.abs(arms))])
        verdict(
            same_sign and smallest >= MIN_LEVER_ARM,
            f"{name}: joint from {math.degrees(lo):.2f} to {math.degrees(hi):.2f} deg "
            f"({math.degrees(hi - lo):.2f} deg over the stroke); lever arm dL/dz from "
            f"{float(np.min(arms)):+.4f} to {float(np.max(arms)):+.4f} m, smallest "
            f"|dL/dz| = {smallest:.4f} m at {math.degrees(where):.2f} deg "
            + (
                "(dz/ds keeps its sign)"
                if same_sign
                else "(a dead centre inside the stroke: dz/ds changes sign)"
            ),
        )
    top = ld.pin_height(z1_hi)
    low = ld.pin_height(z1_lo)
    verdict(2.7 <= top <= 2.8, f"pivot pin at full lift {top:.3f} m above the ground (2.7–2.8)")
    print(f"      pivot pin fully lowered {low:.3f} m above the ground")
    rollback = math.degrees(z1_lo + z2_hi)
    dump = -math.degrees(z1_hi + z2_lo)
    verdict(40.0 <= rollback <= 45.0, f"roll-back at the ground {rollback:.2f} deg (40–45)")
    verdict(45.0 <= dump <= 60.0, f"dump at full height {dump:.2f} deg (45–60)")
    on, off, force, arm = lift_capacity(ld, z1_hi)
    print(
        f"      lift cylinder at {ld.relief_pa * 1e-6:.2f} MPa: {force * 1e-3:.2f} kN, lever "
        f"arm {arm:.4f} m at full lift"
    )
    print(
        f"      lift capacity at the pivot pin at full height: {on:.0f} kg beyond the empty "
        f"bucket (level), {off:.0f} kg with the bucket off"
    )
    caps = [lift_capacity(ld, z)[0] for z in np.linspace(z1_lo, z1_hi, 201)]
    print(f"      smallest over the lift stroke: {min(caps):.0f} kg (bucket on)")
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", metavar="MODEL", help="check a model file instead of designing")
    a = p.parse_args()
    if a.check:
        sys.exit(0 if check(a.check) else 1)
    design()


if __name__ == "__main__":
    main()
