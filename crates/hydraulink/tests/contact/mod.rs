mod element;
mod obb;
