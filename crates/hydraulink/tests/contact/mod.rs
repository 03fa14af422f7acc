mod box_obstacle;
mod element;
mod obb;
