#!/usr/bin/env python3
"""Design of the excavator front linkage of models/excavator.toml (issue 24, item 4).

Planar kinematics of the boom plane (x forward from the swing axis, y up from the ground),
with the bucket four-bar closed exactly:

    boom   : pin A on the upper structure, arm pin C at 5.7 m along the boom's pin line;
             boom cylinder G (upper) -> B (boom); its length s1 depends on the boom angle only.
    arm    : arm pin C, bucket pin F at 2.9 m along the arm's pin line;
             arm cylinder D (boom) -> E (arm's rear extension); s2 depends on the arm angle only.
    bucket : bucket pin F, link pin J and tip P on the bucket; side link I (arm) -> K,
             H-link K -> J; bucket cylinder H (arm) -> K. K is the intersection of the circles
             |K - I| = l_IK and |K - J| = l_KJ (the loop closed exactly, no iteration), and s3
             depends on the bucket angle only.

Every body's points are written in its own frame (origin at its joint, x along its pin line),
so the three cylinder lengths are functions of one joint angle each. For each cylinder the
script:

* sweeps its joint angle from the design pose in both directions until the cylinder reaches
  the ends of its stroke; if the length stops growing (or shrinking) before a stroke end, the
  joint rate per unit stroke d(theta)/ds changes sign there: a dead centre inside the stroke,
  reported as a failure;
* reports the lever arm ds/dtheta at both stroke ends (the margin to the dead centre).

Then it sweeps the three joints over their ranges (a grid of the reachable set) and writes the
working range as a spec sheet gives it, for the bucket tip P:

* maximum reach at ground: the largest x of the tip on the ground line y = 0, measured from the
  swing axis (the envelope's crossing of y = 0, interpolated along the arm sweep);
* maximum digging depth: -min y of the tip;
* maximum cutting height: max y of the tip;
* maximum dump (loading) height: the bucket pin F at its highest (boom up, arm out) less the
  tip radius, i.e. the tip hanging straight below the pin (the script checks that the bucket
  can turn so far);

and the digging forces at a given pressure by virtual work,

    F_tip = p A_piston (ds/dtheta) / |dr_tip/dtheta| = p A_piston |ds/dtheta| / R,

with R the tip radius: |F -> P| for the bucket (breakout), |C -> P| with the bucket in line with
the arm for the arm (crowd; the longest radius, the smallest force).

Run:  python3 scripts/design/excavator_linkage.py            (prints the table)
      python3 scripts/design/excavator_linkage.py --toml     (also the model's points, in the
                                                              initial pose, for excavator.toml)
Only numpy is needed (scripts/requirements.txt).
"""

import argparse
import math
import sys

import numpy as np

# ---------------------------------------------------------------------------------------------
# The design (every length in m, angles in degrees). Changed by hand with this script's table.
# ---------------------------------------------------------------------------------------------
A = np.array([0.20, 2.00])          # boom foot pin on the upper structure (world)
G = np.array([0.263, 1.202])         # boom cylinder base on the upper structure (world)
BOOM_LEN = 5.7                      # A -> C, the Cat 320 reach boom
B_BOOM = np.array([2.314, -0.408])   # boom cylinder rod pin, boom frame
D_BOOM = np.array([2.983, 0.677])    # arm cylinder base pin, boom frame (top of the knee)
ARM_LEN = 2.9                       # C -> F, the R2.9 stick
E_ARM = np.array([-0.845, 0.244])    # arm cylinder rod pin on the rear extension, arm frame
H_ARM = np.array([0.48, 0.28])      # bucket cylinder base pin, arm frame
I_ARM = np.array([2.65, 0.03])      # side-link pivot, arm frame
L_IK = 0.60                         # side link I -> K
L_KJ = 0.72                         # H-link K -> J
J_BKT = np.array([0.055, 0.43])     # H-link pin on the bucket, bucket frame (origin F)
TIP_R = 1.47                        # F -> P, bucket tip radius (Cat 320 HD 1.19 m3 bucket)
P_BKT = np.array([TIP_R, 0.0])      # tip, bucket frame (on the bucket's x axis)

# cylinders: bore, rod, stroke, retracted length (pin to pin); the boom's two as one of twice
# the area
BOOM_CYL = dict(bore=0.120, rod=0.085, n=2, stroke=1.260, closed=1.700)
ARM_CYL = dict(bore=0.140, rod=0.100, n=1, stroke=1.504, closed=2.100)
BKT_CYL = dict(bore=0.120, rod=0.085, n=1, stroke=1.104, closed=1.600)

# the initial pose (= the model's reference configuration): joint angles [deg]; the boom's is
# its pin line against the horizontal, the arm's against the boom's pin line, the bucket's
# against the arm's pin line (negative: folded / curled, the direction the cylinders extend)
POSE0 = dict(boom=30.0, arm=-100.0, bucket=-30.0)

P_SYSTEM = 35.0e6                   # pump cut-off (the Cat 320's "maximum pressure, normal")

# the cited figures (models/README.md, "excavator.toml"): Cat 320, reach boom 5.7 m, R2.9 stick
TARGETS = {
    "reach at ground [m]": 9.85,          # 32.3 ft
    "digging depth [m]": 6.71,            # 22 ft
    "cutting height [m]": 9.36,           # 30.7 ft
    "dump height [m]": 6.49,              # 21.3 ft (maximum loading height)
    "bucket breakout [kN]": 140.6,        # 31 586 lbf, ISO
    "arm crowd [kN]": 106.7,              # 23 987 lbf, ISO
}


def rot(a):
    """Rotation matrix of angle a [rad]."""
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s], [s, c]])


def rot_many(a):
    """Rotation matrices of the angles a [rad] (shape (n,)) as an (n, 2, 2) array."""
    c, s = np.cos(a), np.sin(a)
    return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)


def area(cyl):
    """Piston area [m^2] (all the cylinders of the joint)."""
    return cyl["n"] * math.pi / 4 * cyl["bore"] ** 2


def circle_k(i, j):
    """K from |K - I| = L_IK, |K - J| = L_KJ, on the left of I -> J (the outside of the arm);
    i, j: (n, 2). NaN where the loop cannot close (the four-bar has no position)."""
    d = j - i
    dist = np.linalg.norm(d, axis=-1)
    a = (L_IK**2 - L_KJ**2 + dist**2) / (2 * dist)
    h2 = L_IK**2 - a**2
    h = np.sqrt(np.where(h2 >= 0, h2, np.nan))
    u = d / dist[..., None]
    n = np.stack([-u[..., 1], u[..., 0]], -1)
    return i + a[..., None] * u + h[..., None] * n


# --- the three cylinder lengths as functions of their joint angles [rad] -----------------------
def s_boom(al):
    b = A + (rot_many(al) @ B_BOOM)
    return np.linalg.norm(b - G, axis=-1)


def s_arm(ga):
    # in the boom frame: C = (BOOM_LEN, 0), the arm turned by ga
    e = np.array([BOOM_LEN, 0.0]) + rot_many(ga) @ E_ARM
    return np.linalg.norm(e - D_BOOM, axis=-1)


def k_of(de):
    """K in the arm frame for bucket angles de [rad]."""
    f = np.array([ARM_LEN, 0.0])
    j = f + rot_many(de) @ J_BKT
    return circle_k(np.broadcast_to(I_ARM, j.shape), j)


def s_bucket(de):
    return np.linalg.norm(k_of(de) - H_ARM, axis=-1)


def joint_range(s_fun, q0, cyl, name, lo=-math.pi, hi=math.pi, n=20001):
    """Sweeps q from q0 both ways until s reaches the stroke ends. Returns (q_min, q_max,
    report) with the lever arms ds/dq at both ends; a dead centre (ds/dq changing sign inside
    the stroke) or a stroke end the joint never reaches is an error in the report."""
    s_min, s_max = cyl["closed"], cyl["closed"] + cyl["stroke"]
    s0 = float(s_fun(np.array([q0]))[0])
    errors = []
    if not s_min < s0 < s_max:
        errors.append(f"initial length {s0:.4f} m outside the stroke [{s_min}, {s_max}]")
    ends = {}
    for direction in (+1, -1):
        q = q0 + direction * np.linspace(0.0, (hi - lo), n)
        s = s_fun(q)
        ds = np.gradient(s, q)
        sign0 = np.sign(ds[0])
        # walk until the stroke end or until the length turns back (dead centre) or NaN
        k_end = None
        for k in range(1, n):
            if not np.isfinite(s[k]):
                errors.append(f"{name}: loop opens at {math.degrees(q[k]):.1f} deg")
                break
            if np.sign(ds[k]) != sign0:
                errors.append(
                    f"{name}: dead centre at {math.degrees(q[k]):.1f} deg, length {s[k]:.4f} m "
                    f"(inside the stroke)")
                break
            if s[k] <= s_min or s[k] >= s_max:
                k_end = k
                break
        if k_end is None:
            continue
        # interpolate the end angle
        s_end = s_min if s[k_end] <= s_min else s_max
        t = (s_end - s[k_end - 1]) / (s[k_end] - s[k_end - 1])
        q_end = q[k_end - 1] + t * (q[k_end] - q[k_end - 1])
        ends[direction] = (q_end, float(ds[k_end]), s_end)
    if len(ends) != 2:
        return None, None, errors
    (q_a, lev_a, s_a), (q_b, lev_b, s_b) = ends[+1], ends[-1]
    q_lo, q_hi = sorted([q_a, q_b])
    # the whole range once more: one sign of ds/dq and its smallest magnitude
    q = np.linspace(q_lo, q_hi, 4001)
    ds = np.gradient(s_fun(q), q)
    if not (np.all(ds > 0) or np.all(ds < 0)):
        errors.append(f"{name}: ds/dq changes sign inside the stroke")
    report = dict(
        q_lo=q_lo, q_hi=q_hi, s0=s0, lever_min=float(np.min(np.abs(ds))),
        lever_max=float(np.max(np.abs(ds))), lever_ends=(abs(lev_a), abs(lev_b)))
    return q_lo, q_hi, (errors, report)


def four_bar_margins(de_lo, de_hi):
    """Transmission angles of the bucket four-bar over the range: the angle at K between the
    side link and the H-link, and at J between the H-link and F -> J (a toggle at 0 or 180)."""
    de = np.linspace(de_lo, de_hi, 2001)
    f = np.array([ARM_LEN, 0.0])
    j = f + rot_many(de) @ J_BKT
    k = k_of(de)

    def ang(u, v):
        c = np.sum(u * v, -1) / np.linalg.norm(u, axis=-1) / np.linalg.norm(v, axis=-1)
        return np.degrees(np.arccos(np.clip(c, -1, 1)))

    at_k = ang(I_ARM - k, j - k)
    at_j = ang(k - j, f - j)
    cyl_k = ang(H_ARM - k, I_ARM - k)   # cylinder against the side link (H, K, I collinear)
    return (at_k.min(), at_k.max()), (at_j.min(), at_j.max()), (cyl_k.min(), cyl_k.max())


def tip_points(al, ga, de):
    """Tip P and bucket pin F (world) for arrays of angles (broadcast)."""
    al, ga, de = np.broadcast_arrays(al, ga, de)
    shape = al.shape
    al, ga, de = al.ravel(), ga.ravel(), de.ravel()
    c = A + rot_many(al) @ np.array([BOOM_LEN, 0.0])
    f = c + rot_many(al + ga) @ np.array([ARM_LEN, 0.0])
    p = f + rot_many(al + ga + de) @ P_BKT
    return p.reshape(shape + (2,)), f.reshape(shape + (2,))


def working_range(rng, n=121):
    al = np.linspace(*rng["boom"], n)
    ga = np.linspace(*rng["arm"], n)
    de = np.linspace(*rng["bucket"], 61)
    AL, GA, DE = np.meshgrid(al, ga, de, indexing="ij")
    p, f = tip_points(AL, GA, DE)
    depth = -p[..., 1].min()
    cut = p[..., 1].max()
    # reach at ground: crossings of y = 0 along the arm sweep, interpolated
    y, x = p[..., 1], p[..., 0]
    cross = (y[:, :-1, :] * y[:, 1:, :]) <= 0
    t = np.where(cross, y[:, :-1, :] / np.where(cross, y[:, :-1, :] - y[:, 1:, :], 1), 0)
    xc = x[:, :-1, :] + t * (x[:, 1:, :] - x[:, :-1, :])
    reach = np.max(np.where(cross, xc, -np.inf))
    # dump height: the bucket pin at its highest, the tip hanging straight below it (the
    # bucket angle that points the tip down must lie inside the bucket's range)
    fy = f[..., 0, 1]
    k = np.unravel_index(np.argmax(fy), fy.shape)
    arm_abs = AL[k + (0,)] + GA[k + (0,)]
    tip_down = -math.pi / 2 - arm_abs
    if not rng["bucket"][0] <= tip_down <= rng["bucket"][1]:
        raise SystemExit("the bucket cannot hang its tip straight down at the highest pin")
    dump = fy[k] - TIP_R
    return dict(reach=reach, depth=depth, cut=cut, dump=dump)


def forces(rng, p=P_SYSTEM):
    de = np.linspace(*rng["bucket"], 4001)
    lev_b = np.abs(np.gradient(s_bucket(de), de))
    bkt = p * area(BKT_CYL) * lev_b / TIP_R
    ga = np.linspace(*rng["arm"], 4001)
    lev_a = np.abs(np.gradient(s_arm(ga), ga))
    arm = p * area(ARM_CYL) * lev_a / (ARM_LEN + TIP_R)
    return dict(bucket_max=bkt.max(), bucket_at=math.degrees(de[bkt.argmax()]),
                arm_max=arm.max(), arm_at=math.degrees(ga[arm.argmax()]))


def design_report():
    q0 = {k: math.radians(v) for k, v in POSE0.items()}
    ok = True
    rng = {}
    lines = []
    for name, fun, cyl in (("boom", s_boom, BOOM_CYL), ("arm", s_arm, ARM_CYL),
                           ("bucket", s_bucket, BKT_CYL)):
        lo, hi, res = joint_range(fun, q0[name], cyl, name)
        if lo is None:
            print(f"{name}: range not found: {res}")
            ok = False
            continue
        errors, rep = res
        if errors:
            ok = False
            for e in errors:
                lines.append("FAIL " + e)
        rng[name] = (lo, hi)
        lines.append(
            f"{name:6s} cylinder: s0 {rep['s0']:.4f} m ({(rep['s0'] - cyl['closed']) / cyl['stroke'] * 100:.0f} % out), "
            f"range {math.degrees(lo):7.2f} .. {math.degrees(hi):7.2f} deg "
            f"({math.degrees(hi - lo):.1f} deg), lever ds/dq {rep['lever_min']:.3f} .. "
            f"{rep['lever_max']:.3f} m (ends {rep['lever_ends'][0]:.3f}, {rep['lever_ends'][1]:.3f})")
    # the arm cannot fold into the boom: F stays below the boom's pin line (arm angle in (-180, 0))
    if not (-math.pi < rng["arm"][0] and rng["arm"][1] < 0):
        ok = False
        lines.append("FAIL arm folds through the boom's pin line")
    f_side = ARM_LEN * math.sin(rng["arm"][0])
    lines.append(f"arm fully in: bucket pin {abs(f_side):.3f} m below the boom's pin line "
                 f"(arm at {math.degrees(rng['arm'][0]):.1f} deg to it)")
    tk, tj, ck = four_bar_margins(*rng["bucket"])
    lines.append(f"bucket four-bar: angle at K {tk[0]:.1f}..{tk[1]:.1f} deg, at J {tj[0]:.1f}.."
                 f"{tj[1]:.1f} deg, cylinder to side link {ck[0]:.1f}..{ck[1]:.1f} deg")
    for lo_hi in (tk, tj, ck):
        if lo_hi[0] < 10 or lo_hi[1] > 170:
            ok = False
            lines.append("FAIL a four-bar angle within 10 deg of a toggle")
    wr = working_range(rng)
    fo = forces(rng)
    got = {
        "reach at ground [m]": wr["reach"],
        "digging depth [m]": wr["depth"],
        "cutting height [m]": wr["cut"],
        "dump height [m]": wr["dump"],
        "bucket breakout [kN]": fo["bucket_max"] / 1e3,
        "arm crowd [kN]": fo["arm_max"] / 1e3,
    }
    lines.append("")
    lines.append(f"{'figure':24s} {'model':>8s} {'cited':>8s} {'error':>8s}")
    for k, v in got.items():
        err = (v - TARGETS[k]) / TARGETS[k]
        flag = "" if abs(err) <= 0.10 else "  FAIL (> 10 %)"
        if flag:
            ok = False
        lines.append(f"{k:24s} {v:8.3f} {TARGETS[k]:8.3f} {err * 100:+7.1f} %{flag}")
    lines.append(f"(forces at {P_SYSTEM / 1e6:.1f} MPa; bucket force largest at "
                 f"{fo['bucket_at']:.1f} deg, arm at {fo['arm_at']:.1f} deg)")
    print("\n".join(lines))
    return ok, rng


def toml_points():
    """Every point of the model in the initial pose (world, z = 0)."""
    al, ga, de = (math.radians(POSE0[k]) for k in ("boom", "arm", "bucket"))
    rb, ra, rk = rot(al), rot(al + ga), rot(al + ga + de)
    c = A + rb @ np.array([BOOM_LEN, 0.0])
    pts = dict(A=A, G=G, B=A + rb @ B_BOOM, D=A + rb @ D_BOOM, C=c)
    f = c + ra @ np.array([ARM_LEN, 0.0])
    pts.update(E=c + ra @ E_ARM, H=c + ra @ H_ARM, I=c + ra @ I_ARM, F=f)
    j = f + rk @ J_BKT
    pts.update(J=j, P=f + rk @ P_BKT)
    kk = circle_k(pts["I"][None, :], j[None, :])[0]
    pts["K"] = kk
    for k, v in pts.items():
        print(f"{k} = [{v[0]:.6f}, {v[1]:.6f}, 0.0]")
    for name, (b, r), cyl in (("boom_cyl", ("G", "B"), BOOM_CYL), ("arm_cyl", ("D", "E"), ARM_CYL),
                              ("bucket_cyl", ("H", "K"), BKT_CYL)):
        s = np.linalg.norm(pts[r] - pts[b])
        print(f"{name}: s0 = {s:.6f} m ({s - cyl['closed']:.4f} m out of {cyl['stroke']})")
    print(f"side link |IK| = {np.linalg.norm(pts['K'] - pts['I']):.6f}, H-link |KJ| = "
          f"{np.linalg.norm(pts['J'] - pts['K']):.6f}")
    bodies(pts)
    return pts


# masses [kg] and the beams the inertias are taken from: (mass, from, to, section [m], COM as
# the fraction along from -> to plus an offset across it [m], to the outside of the bend)
MASSES = dict(boom=(1800.0, "A", "C", 0.6, 0.45, 0.30), arm=(950.0, "C", "F", 0.45, 0.38, 0.0),
              bucket=(820.0, "F", "P", 1.1, 0.45, 0.25), side_link=(40.0, "I", "K", 0.12, 0.5, 0.0),
              h_link=(55.0, "K", "J", 0.12, 0.5, 0.0))


def bodies(pts):
    """COM and inertia tensor about it (world axes, products as tensor entries) of a slender
    box from -> to of the given section: I_axial = m w^2/6, I_perp = m (L^2 + w^2)/12."""
    for name, (m, a, b, w, frac, off) in MASSES.items():
        pa, pb = pts[a], pts[b]
        u = (pb - pa) / np.linalg.norm(pb - pa)
        n = np.array([-u[1], u[0]])
        length = np.linalg.norm(pb - pa)
        com = pa + frac * (pb - pa) + off * n
        i_ax, i_perp = m * w * w / 6, m * (length**2 + w * w) / 12
        ixx = i_ax * u[0] ** 2 + i_perp * u[1] ** 2
        iyy = i_ax * u[1] ** 2 + i_perp * u[0] ** 2
        ixy = (i_ax - i_perp) * u[0] * u[1]
        print(f"{name}: mass_kg = {m}, com = [{com[0]:.6f}, {com[1]:.6f}, 0.0], inertia = "
              f"[{ixx:.1f}, {iyy:.1f}, {i_perp:.1f}, {ixy:.1f}, 0.0, 0.0]")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--toml", action="store_true", help="print the initial-pose points")
    args = ap.parse_args()
    ok, _ = design_report()
    if args.toml:
        print()
        toml_points()
    print("\nOK: every stroke ends before its dead centre, every figure within 10 %" if ok
          else "\nNOT OK")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
