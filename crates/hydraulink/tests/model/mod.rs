//! `src/model/`: the compiled model.

mod layout;
