//! The scalar type of every constitutive law and of the residual: `f64` in production and
//! `num_dual::Dual64` for the exact tangent (STYLE: laws written once, scalar-generic).

use nalgebra::{Matrix3, Vector3};
use num_dual::DualNum;

/// A scalar the residual can be evaluated in: `f64` or a dual number over `f64`.
pub trait Real:
    DualNum<Primitive = f64> + Copy + nalgebra::Scalar + num_traits::Zero + num_traits::One
{
}
impl<T> Real for T where
    T: DualNum<Primitive = f64> + Copy + nalgebra::Scalar + num_traits::Zero + num_traits::One
{
}

/// Lifts a constant vector.
#[inline]
pub fn v3<S: Real>(v: &Vector3<f64>) -> Vector3<S> {
    Vector3::new(S::from(v.x), S::from(v.y), S::from(v.z))
}

/// Lifts a constant matrix.
#[inline]
pub fn m3<S: Real>(m: &Matrix3<f64>) -> Matrix3<S> {
    m.map(S::from)
}

/// A constant.
#[inline]
pub fn c<S: Real>(x: f64) -> S {
    S::from(x)
}

/// The real part.
#[inline]
pub fn re<S: Real>(x: S) -> f64 {
    x.re()
}
