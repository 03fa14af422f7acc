mod obb;
mod element;
