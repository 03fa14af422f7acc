//! `src/model/`: the compiled model.

mod degrees;
mod layout;
mod markers;
mod pose;
