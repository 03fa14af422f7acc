//! Field checks shared by the model validation (`pipeline::validate`) and the elements' own spec
//! checks (`Valve43Spec::validate`, …): where a check is ([`At`]: the path and the element it
//! names), numbers, and references to nodes and inputs by name. It imports no spec type, so an
//! element's file can use it without importing the spec or the validation.

use std::collections::BTreeMap;

use nalgebra::Vector3;

use crate::error::ModelError;

/// Smallest accepted norm of an axis or normal vector (before normalisation) [-].
pub(crate) const MIN_AXIS_NORM: f64 = 1e-9;

/// Largest magnitude of a pressure field (a name ending in `_pa`) [Pa]: 1 GPa, ten times the
/// working pressure of the stiffest hydraulic machines (< 0.1 GPa), where the lumped-fluid law of
/// a constant bulk modulus no longer holds. A larger value is a unit mistake (MPa or bar given
/// as Pa the wrong way round) or a typo, and would overflow the pressure rates.
pub const MAX_PRESSURE_PA: f64 = 1e9;

/// Largest bulk modulus (a field name ending in `_pa` that names a bulk modulus) [Pa]: 1 TPa,
/// above diamond's (0.44 TPa); oil is about 1.5 GPa and a steel wall 0.2 TPa.
pub const MAX_BULK_MODULUS_PA: f64 = 1e12;

/// The physical bound that the unit in a field's name sets, as the error message, if the finite
/// value `x` breaks it. Pressures and bulk moduli (`*_pa`) are bounded in magnitude
/// ([`MAX_PRESSURE_PA`], [`MAX_BULK_MODULUS_PA`]); a conductance (`*_m3_s_pa`) is not a pressure.
pub(crate) fn unit_bound(field: &str, x: f64) -> Option<String> {
    let name = field.rsplit(['.', ']']).next().unwrap_or(field);
    if !name.ends_with("_pa") || name.ends_with("_m3_s_pa") {
        return None;
    }
    let (bound, what) = if name.contains("bulk") {
        (
            MAX_BULK_MODULUS_PA,
            "a bulk modulus (oil about 1.5e9 Pa, steel 2e11 Pa)",
        )
    } else {
        (
            MAX_PRESSURE_PA,
            "a pressure (hydraulic machines work below 1e8 Pa); check the unit: Pa, not MPa or bar",
        )
    };
    (x.abs() > bound)
        .then(|| format!("must be at most {bound:e} Pa in magnitude as {what}, got {x:e}"))
}

/// The hydraulic nodes of a spec by name (volumes, pumps, tanks).
pub(crate) type Nodes<'a> = BTreeMap<&'a str, NodeKind>;

/// What a hydraulic node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeKind {
    Volume,
    Pump,
    Tank,
}

impl NodeKind {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            NodeKind::Volume => "a volume",
            NodeKind::Pump => "a pump",
            NodeKind::Tank => "a tank",
        }
    }
}

/// The flow constant compile derives, C_d A √(2/ρ) (000 eq. 25), must be finite.
pub(crate) fn flow_constant_finite(
    at: &At,
    field: &str,
    cd_area: f64,
    density_kg_m3: f64,
) -> Result<(), ModelError> {
    let c = cd_area * (2.0 / density_kg_m3).sqrt();
    if c.is_finite() {
        Ok(())
    } else {
        Err(at.error(
            field,
            format!("is out of range: the flow constant C_d A √(2/ρ) is {c:?}"),
        ))
    }
}

/// Checks that `name` is a hydraulic node (volume, pump or tank); returns its kind.
pub(crate) fn node_ref(
    at: &At,
    field: &str,
    name: &str,
    nodes: &BTreeMap<&str, NodeKind>,
) -> Result<NodeKind, ModelError> {
    if let Some(&kind) = nodes.get(name) {
        return Ok(kind);
    }
    let expected = if nodes.is_empty() {
        "the model has no volumes, pumps or tanks".to_string()
    } else {
        format!(
            "expected a volume, pump or tank: one of {}",
            one_of(nodes.keys().copied())
        )
    };
    if name.is_empty() {
        Err(at.error(field, format!("is empty; {expected}")))
    } else {
        Err(at.error(field, format!("unknown node '{name}'; {expected}")))
    }
}

/// Checks that `name` is a volume (not a pump or tank).
pub(crate) fn volume_ref(
    at: &At,
    field: &str,
    name: &str,
    nodes: &BTreeMap<&str, NodeKind>,
) -> Result<(), ModelError> {
    let volumes = || {
        one_of(
            nodes
                .iter()
                .filter(|(_, k)| **k == NodeKind::Volume)
                .map(|(n, _)| *n),
        )
    };
    match nodes.get(name) {
        Some(NodeKind::Volume) => Ok(()),
        Some(kind) => Err(at.error(
            field,
            format!(
                "'{name}' is {}, but this port needs a volume: one of {}",
                kind.describe(),
                volumes()
            ),
        )),
        None if name.is_empty() => Err(at.error(
            field,
            format!("is empty; expected a volume: one of {}", volumes()),
        )),
        None => Err(at.error(
            field,
            format!("unknown volume '{name}'; expected one of {}", volumes()),
        )),
    }
}

/// Checks that `name` is an input signal.
pub(crate) fn input_ref(
    at: &At,
    field: &str,
    name: &str,
    inputs: &[&str],
) -> Result<(), ModelError> {
    if inputs.contains(&name) {
        return Ok(());
    }
    let expected = if inputs.is_empty() {
        "the model has no [[inputs]]".to_string()
    } else {
        format!("expected one of {}", one_of(inputs.iter().copied()))
    };
    if name.is_empty() {
        Err(at.error(field, format!("is empty; {expected}")))
    } else {
        Err(at.error(field, format!("unknown input '{name}'; {expected}")))
    }
}

/// Where a check is: the path prefix of the element and its display name.
pub(crate) struct At {
    pub(crate) prefix: String,
    pub(crate) element: String,
}

impl At {
    pub(crate) fn new(prefix: &str, element: &str) -> Self {
        At {
            prefix: prefix.to_string(),
            element: element.to_string(),
        }
    }

    /// The element `list[index]`, shown as `noun 'name'`.
    pub(crate) fn element(list: &str, index: usize, noun: &str, name: &str) -> Self {
        At {
            prefix: format!("{list}[{index}]"),
            element: format!("{noun} '{name}'"),
        }
    }

    pub(crate) fn path(&self, field: &str) -> String {
        match (self.prefix.is_empty(), field.is_empty()) {
            (true, _) => field.to_string(),
            (false, true) => self.prefix.clone(),
            (false, false) => format!("{}.{field}", self.prefix),
        }
    }

    pub(crate) fn error(&self, field: &str, message: impl Into<String>) -> ModelError {
        ModelError::new(self.path(field), self.element.clone(), message)
    }

    /// Finite, and within the bound of its unit ([`unit_bound`]: pressures).
    pub(crate) fn finite(&self, field: &str, x: f64) -> Result<f64, ModelError> {
        if !x.is_finite() {
            return Err(self.error(field, format!("must be a finite number, got {x:?}")));
        }
        match unit_bound(field, x) {
            Some(message) => Err(self.error(field, message)),
            None => Ok(x),
        }
    }

    /// Finite and > 0.
    pub(crate) fn positive(&self, field: &str, x: f64) -> Result<f64, ModelError> {
        let x = self.finite(field, x)?;
        if x > 0.0 {
            Ok(x)
        } else {
            Err(self.error(field, format!("must be greater than 0, got {x:?}")))
        }
    }

    /// Finite and >= 0.
    pub(crate) fn non_negative(&self, field: &str, x: f64) -> Result<f64, ModelError> {
        let x = self.finite(field, x)?;
        if x >= 0.0 {
            Ok(x)
        } else {
            Err(self.error(field, format!("must be 0 or greater, got {x:?}")))
        }
    }

    /// Every entry finite; the path of a bad entry is `field[k]`.
    pub(crate) fn finite_all(&self, field: &str, xs: &[f64]) -> Result<(), ModelError> {
        match xs.iter().position(|x| !x.is_finite()) {
            None => Ok(()),
            Some(k) => {
                let x = xs.get(k).copied().unwrap_or(f64::NAN);
                Err(self.error(
                    &format!("{field}[{k}]"),
                    format!("must be a finite number, got {x:?}"),
                ))
            }
        }
    }

    /// A finite direction vector with a usable norm.
    pub(crate) fn nonzero_vector(&self, field: &str, v: &[f64; 3]) -> Result<(), ModelError> {
        self.finite_all(field, v)?;
        // Scale before squaring so that neither tiny nor huge entries under- or overflow.
        let scale = v.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        let norm = if scale == 0.0 {
            0.0
        } else {
            scale * Vector3::from(v.map(|x| x / scale)).norm()
        };
        if norm > MIN_AXIS_NORM {
            Ok(())
        } else {
            Err(self.error(
                field,
                format!("{v:?} is (nearly) zero; a direction needs a norm above {MIN_AXIS_NORM:e}"),
            ))
        }
    }
}

/// `'a', 'b', 'c'` (at most 12 names, then `…`).
pub(crate) fn one_of<'a>(names: impl Iterator<Item = &'a str>) -> String {
    const MAX: usize = 12;
    let names: Vec<&str> = names.collect();
    let mut text = names
        .iter()
        .take(MAX)
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > MAX {
        text.push_str(", …");
    }
    text
}

/// The ports P, T, A, B of a valve (`port_p`, `port_t`, `port_a`, `port_b`): P and T any node,
/// A and B two different volumes.
pub(crate) fn valve_ports(
    at: &At,
    nodes: &Nodes,
    [p, t, a, b]: [&str; 4],
) -> Result<(), ModelError> {
    node_ref(at, "port_p", p, nodes)?;
    node_ref(at, "port_t", t, nodes)?;
    volume_ref(at, "port_a", a, nodes)?;
    volume_ref(at, "port_b", b, nodes)?;
    if b == a {
        return Err(at.error(
            "port_b",
            format!("is the same volume as port_a ('{a}'); work ports A and B must differ"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pressures and bulk moduli are bounded by the unit in their names; conductances and other
    /// units are not.
    #[test]
    fn the_unit_in_a_field_name_bounds_it() {
        assert!(unit_bound("p0_pa", 1e300).is_some());
        assert!(unit_bound("p0_pa", -2e9).is_some());
        assert!(unit_bound("p0_pa", 4.5e7).is_none());
        assert!(unit_bound("hydraulics.volumes[2].p0_pa", 1e10).is_some());
        assert!(unit_bound("cracking_pressure_pa", 1e9).is_none());
        assert!(unit_bound("bulk_modulus_pa", 2e11).is_none());
        assert!(unit_bound("wall_bulk_modulus_pa", 1e13).is_some());
        assert!(unit_bound("gradient_m3_s_pa", 1e300).is_none());
        assert!(unit_bound("mass_kg", 1e300).is_none());
        let message = unit_bound("p0_pa", 1e300).unwrap();
        assert!(
            message.contains("1e9 Pa") && message.contains("1e300"),
            "{message}"
        );
        let at = At::element("hydraulics.volumes", 2, "volume", "V3");
        let e = at.finite("p0_pa", 1e300).unwrap_err();
        assert_eq!(e.path, "hydraulics.volumes[2].p0_pa");
        assert_eq!(e.element, "volume 'V3'");
    }
}
