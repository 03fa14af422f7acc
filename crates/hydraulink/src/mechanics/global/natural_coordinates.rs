//! Conversion of the joint tree into natural coordinates (points and unit vectors) with rigid-body
//! and joint constraints (004 §2, reference note 000_004 004-A). Work in progress (issue 3).
